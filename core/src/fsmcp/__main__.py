import sys

from .cli.commands import main

sys.exit(main())
