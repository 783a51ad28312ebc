"""The deployed artifacts run as AWS runs them: the job archive by spark-submit as EMR Serverless starts it, each
Lambda handler from its code folder and layers, in interpreters that see nothing of the development venv."""
