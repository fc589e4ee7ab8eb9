"""Run ZigZag once, in its own process: ``python -m boanon.targets.zigzag.worker TRIAL_DIR ...``.

The runner starts this module in a subprocess so that a trial can be timed out and killed, and so
ZigZag's logging and memory stay out of the caller. ZigZag's own outputs land in
``TRIAL_DIR`` (its ``dump_folder``); a failure ends with one ``zigzag failed: <Type>: <message>``
line on stderr and exit status 3, which the runner turns into the trial's failure reason.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from boanon.targets.zigzag.layout import (
    ACCELERATOR_FILE,
    FAILURE_PREFIX,
    FAILURE_STATUS,
    MAPPING_FILE,
)


def evaluate(trial_dir: Path, model: str, layers: list[int], opt: str, lpf_limit: int) -> None:
    """Run ZigZag on the trial's accelerator and mapping files, dumping into ``trial_dir``.

    The stages are those of ``zigzag.api.get_hardware_performance_zigzag`` for a plain (not
    in-memory-compute) accelerator, less the visualisation and pickle stages: their outputs are
    not read, and importing them (matplotlib, seaborn, scipy.stats) tripled ZigZag's start-up.
    """
    from zigzag.mapping.temporal_mapping import TemporalMappingType
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage
    from zigzag.stages.main import MainStage
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage
    from zigzag.stages.mapping.temporal_mapping_generator_stage import TemporalMappingGeneratorStage
    from zigzag.stages.parser.accelerator_parser import AcceleratorParserStage
    from zigzag.stages.parser.onnx_model_parser import ONNXModelParserStage
    from zigzag.stages.results.reduce_stages import (
        MinimalEDPStage,
        MinimalEnergyStage,
        MinimalLatencyStage,
        SumStage,
    )
    from zigzag.stages.results.save import CompleteSaveStage, SimpleSaveStage
    from zigzag.stages.workload_iterator import WorkloadStage

    from boanon.targets.zigzag.workload import conv_slice

    reduce = {"EDP": MinimalEDPStage, "energy": MinimalEnergyStage, "latency": MinimalLatencyStage}[opt]
    stages = [ONNXModelParserStage, AcceleratorParserStage, SimpleSaveStage, SumStage, WorkloadStage,
              CompleteSaveStage, reduce, SpatialMappingGeneratorStage, reduce,
              TemporalMappingGeneratorStage, CostModelStage]
    MainStage(
        list_of_callables=stages,
        accelerator=str(trial_dir / ACCELERATOR_FILE),
        workload=conv_slice(model, layers),
        mapping=str(trial_dir / MAPPING_FILE),
        dump_folder=str(trial_dir),
        loma_lpf_limit=lpf_limit,
        loma_show_progress_bar=False,
        nb_mappings_generated=3,
        enable_mix_spatial_mapping_generation=False,
        access_same_data_considered_as_no_access=True,
        temporal_mapping_type=TemporalMappingType("uneven"),
    ).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trial_dir", type=Path)
    parser.add_argument("--model", required=True)
    parser.add_argument("--layers", required=True, help="comma-separated Conv indices")
    parser.add_argument("--opt", default="EDP", choices=["energy", "latency", "EDP"])
    parser.add_argument("--lpf-limit", type=int, default=4)
    args = parser.parse_args(argv)
    # ZigZag logs every stage at INFO on the root logger: keep warnings only.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        evaluate(args.trial_dir, args.model, [int(x) for x in args.layers.split(",")], args.opt,
                 args.lpf_limit)
    except Exception as exc:  # any ZigZag failure, assertions included, fails this trial
        message = " ".join(str(exc).split())
        print(f"{FAILURE_PREFIX}{type(exc).__name__}: {message}", file=sys.stderr)
        return FAILURE_STATUS
    return 0


if __name__ == "__main__":
    sys.exit(main())
