"""Names shared by the runner and its worker process: the trial's files and the failure line."""

ACCELERATOR_FILE = "accelerator.yaml"
MAPPING_FILE = "mapping.yaml"
DESIGN_FILE = "design.json"
LOG_FILE = "zigzag.log"
FAILURE_PREFIX = "zigzag failed: "
"""The worker's last stderr line on failure: this prefix, the exception type and its message."""
FAILURE_STATUS = 3
