"""The bundled demo: load every file listed in the demo manifest (demo/data/manifest.csv)."""

import csv
import sys
from pathlib import Path

from srlens.baseline import demo_baselines
from srlens.loaders.load import load_outputs, load_treebank
from srlens.paths import DEMO_DATA_DIR

DEMO_MANIFEST = DEMO_DATA_DIR / "manifest.csv"


def load_demo(warehouse, manifest=DEMO_MANIFEST, baselines=True):
    """Load the demo files; with baselines, also train and run the Hall & Nemec baseline on them."""
    manifest = Path(manifest)
    # The demo makes its own folder (`make build`: warehouse/); other loads refuse a missing folder.
    Path(warehouse).parent.mkdir(parents=True, exist_ok=True)
    with open(manifest, newline="") as handle:
        rows = list(csv.DictReader(handle))
    # Treebanks first: runs are matched against them.
    rows.sort(key=lambda row: row["kind"] != "treebank")
    for number, row in enumerate(rows, start=1):
        path = manifest.parent / row["file"]
        print(f"[{number}/{len(rows)}] loading {row['kind']} {row['file']}", file=sys.stderr)
        if row["kind"] == "treebank":
            load_treebank(warehouse, path, row["corpus"])
        else:
            load_outputs(warehouse, path, row["corpus"], row["team"], row["run"], campaign=row["campaign"])
    if baselines:
        print("training and running the baseline linearizer on the demo treebanks", file=sys.stderr)
        demo_baselines(warehouse)
    return len(rows)
