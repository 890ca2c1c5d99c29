"""Load and save timings of an agent file: libyaml's events against ruamel's round-trip loader,
and a save that edits the file in place against a plain dump.

Run: ``.venv/bin/python bench/yaml_save.py [AGENT_FILE]`` (default: the travel-desk example).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import timeit
from pathlib import Path

from ruamel.yaml import YAML

from schema_types.files._yaml_dump import dump_yaml
from schema_types.files.agent_file import load_agent, save_agent
from schema_types.files.agent_yaml import parse_yaml_data

_EXAMPLE = Path(__file__).parents[1] / "resources" / "examples" / "travel-desk.agent.yaml"


def _best_ms(stmt: object, number: int = 20) -> float:
    return min(timeit.repeat(stmt, number=number, repeat=5)) / number * 1000  # type: ignore[arg-type]


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else _EXAMPLE
    text = source.read_text(encoding="utf-8")
    round_trip = YAML(typ="rt")
    print(f"load, libyaml events:       {_best_ms(lambda: parse_yaml_data(text)):7.2f} ms")
    print(f"load, ruamel round trip:    {_best_ms(lambda: round_trip.load(text)):7.2f} ms")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / source.name
        shutil.copyfile(source, path)
        agent = load_agent(path)
        data = agent.to_data()
        print(f"save, no change:            {_best_ms(lambda: save_agent(agent, path)):7.2f} ms")
        edited = agent.model_copy(deep=True)
        edited.metadata.description = "Edited."
        other = Path(folder) / "other.agent.yaml"

        def edit_once() -> None:
            shutil.copyfile(source, other)
            save_agent(edited, other)

        print(f"save, one line edited:      {_best_ms(edit_once, 5):7.2f} ms")
        print(f"plain dump (no comments):   {_best_ms(lambda: dump_yaml(data)):7.2f} ms")


if __name__ == "__main__":
    main()
