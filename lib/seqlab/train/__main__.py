"""``python -m seqlab.train [名字 …]``：按登记的配方重新训练并保存检查点（不给名字就全部重训）。"""

import sys

from seqlab.train import main

raise SystemExit(main(sys.argv[1:]))
