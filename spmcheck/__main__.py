import sys

from checker.cli import console_main

sys.exit(console_main())
