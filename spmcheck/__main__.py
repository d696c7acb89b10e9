import sys

from spmcheck.checker.cli import console_main

sys.exit(console_main())
