"""EMR Serverless entry point of the sink job: `entrypoint.py run --config s3://bucket/key` (the trigger also starts
`doctor` and `iceberg maintain` runs through it).

Spark runs this file with the archive's interpreter (`./environment/bin/python`), whose site-packages hold the
sink engine and its dependencies; the arguments go to the engine's CLI unchanged.
"""
import sys

from sink_engine.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
