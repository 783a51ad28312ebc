import sys

from sink_engine.cli import main

sys.exit(main())
