import sys

from gpustall.cli import main

sys.exit(main())
