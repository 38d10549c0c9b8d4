"""What a finished run leaves for people to watch and share: every pretraining run's and fine-tuning
grid point's TensorBoard event files read back with the scalars they must hold, and every exported
model's card held to its run's summary.json.

    python bench/run_artifacts.py results            # after `make replicate`

Reads the event files with tensorboard's own reader (``EventAccumulator``, what ``tensorboard
--inspect`` prints from). A pretraining run must hold every scalar of pipeline/pretrain/trainer.py's
``event_scalars`` with one point per logged step of its log.csv (a resumed run: no step twice); a
grid point ``train/loss`` at each of its steps from 1 and ``validation/score`` once, at the last. A card's YAML header
must parse and its ``pretraining:`` numbers equal the summary's. Prints one line per kind and every
fault; exits 1 on any.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pipeline.files import read_json
from pipeline.pretrain.model_card import CARD_FILE, SUMMARY_KEYS
from pipeline.pretrain.trainer import LOG_COLUMNS, event_scalars
from pipeline.tensorboard_log import EVENTS_DIR

# Every scalar a pretraining run writes, as the trainer names them (a logged row of every column)
PRETRAINING_TAGS = set(event_scalars(dict.fromkeys(LOG_COLUMNS, 0.0), 0.0))
EVALUATED_TAGS = {"heldout/loss", "heldout/yardstick"}  # only at the steps the run evaluated


def scalars(directory: Path) -> dict[str, list[int]]:
    """Each scalar tag of the event files under ``directory`` -> its steps, in order."""
    events = EventAccumulator(str(directory), size_guidance={"scalars": 0})  # 0: keep every point
    events.Reload()
    return {tag: [point.step for point in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def pretraining_faults(run_dir: Path) -> list[str]:
    found = scalars(run_dir / EVENTS_DIR)
    with (run_dir / "log.csv").open() as log:
        rows = list(csv.DictReader(log))
    logged = [int(row["step"]) for row in rows]
    evaluated = [int(row["step"]) for row in rows if row["heldout_loss"] not in ("", None)]
    faults = [f"{run_dir}: no scalar {tag}" for tag in sorted(PRETRAINING_TAGS - set(found))]
    for tag, steps in found.items():
        expected = evaluated if tag in EVALUATED_TAGS else logged
        if steps != expected:
            faults.append(f"{run_dir}: {tag} at {len(steps)} steps, log.csv has {len(expected)} ({steps[:3]}... vs {expected[:3]}...)")
    return faults


def grid_point_faults(point_dir: Path) -> list[str]:
    found = scalars(point_dir)
    train = found.get("train/loss", [])
    faults = [] if train == list(range(1, len(train) + 1)) else [f"{point_dir}: train/loss steps {train[:3]}..., not 1, 2, ..."]
    if found.get("validation/score") != [len(train)]:
        faults.append(f"{point_dir}: validation/score at {found.get('validation/score')}, expected [{len(train)}]")
    return faults


def card_faults(run_dir: Path) -> list[str]:
    text = (run_dir / "model" / CARD_FILE).read_text()
    header = yaml.safe_load(text.split("---\n")[1])["pretraining"]
    summary = read_json(run_dir / "summary.json")
    differing = [key for key in SUMMARY_KEYS if header[key] != summary[key]]
    return [f"{run_dir}: card {key} = {header[key]!r}, summary.json {summary[key]!r}" for key in differing]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a finished run's results/ directory")
    args = parser.parse_args()
    runs = sorted(path.parent for path in (args.results / "pretrain").glob("*/summary.json"))
    points = sorted(path for path in (args.results / "finetune").glob(f"*/*/{EVENTS_DIR}/*") if path.is_dir())
    faults = [fault for run in runs for fault in pretraining_faults(run)]
    print(f"pretraining runs: {len(runs)}, event files read, {len(faults)} faults")
    point_faults = [fault for point in points for fault in grid_point_faults(point)]
    print(f"fine-tuning grid points: {len(points)}, event files read, {len(point_faults)} faults")
    cards = [run for run in runs if (run / "model" / CARD_FILE).exists()]
    card = [fault for run in cards for fault in card_faults(run)]
    missing = [f"{run}: no model card" for run in runs if run not in cards]
    print(f"model cards: {len(cards)} of {len(runs)} runs, {len(card) + len(missing)} faults")
    for fault in faults + point_faults + card + missing:
        print(fault)
    sys.exit(1 if faults or point_faults or card or missing else 0)


if __name__ == "__main__":
    main()
