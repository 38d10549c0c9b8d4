"""The house rules of pipeline/: no import cycles, floors that import nothing above them,
files a person can read in one sitting, and claims whose numbers live beside their sentence."""

from __future__ import annotations

import ast
import math
import re
import subprocess
import sys

import pytest

from pipeline import code_graph
from pipeline.analysis.claims.spec import read_claims
from pipeline.code_graph import import_graph, package_modules
from tests.conftest import REPO

MAX_LINES = 450
# The static imports (the layering rules are about them): pipeline/code_graph.py builds the
# graph the stages' code hashes are taken from, registries' run-time imports included.
GRAPH = import_graph(registries=False)
MODULES = package_modules()


def reachable(start: str) -> set[str]:
    return code_graph.reachable(GRAPH, start)


def test_the_import_graph_sees_lazy_and_type_checking_imports() -> None:
    # pipeline/__main__.py imports its stages by name at run time; the rest import statically.
    assert "pipeline.workflow.configure" in GRAPH["pipeline.workflow.check_config"]
    assert "pipeline.analysis.contract" in GRAPH["pipeline.analysis.claims.registry"]


def test_no_import_cycle_in_the_package() -> None:
    cycles = sorted(module for module in GRAPH if module in reachable(module))
    assert cycles == [], f"modules that import themselves through others: {cycles}"


@pytest.mark.parametrize(
    ("floor", "allowed"),
    [
        # Compute kernels declare themselves through the registry alone: the config reads them.
        ("pipeline.kernels", {"pipeline.registry", "pipeline.errors"}),
        # Config types import nothing of the pipeline but the kernels' declarations: every stage can depend on them.
        ("pipeline.config", {"pipeline.kernels", *code_graph.reachable(import_graph(), "pipeline.kernels")}),
        # The example types neither: the backbone and the batch read them without depending on any objective.
        ("pipeline.example", set()),
        # The results contract and the claim checks never reach the aggregate stage or the renderer;
        # they read the objective registry, which needs no more than numpy, and the published
        # tables' key columns from their reader.
        (
            "pipeline.analysis.contract",
            {
                "pipeline.analysis.runs",
                "pipeline.analysis.stats",
                "pipeline.external.published_tables",
                "pipeline.errors",
                "pipeline.objectives",
                *code_graph.reachable(import_graph(), "pipeline.objectives"),  # its kinds, registered by name
            },
        ),
    ],
)
def test_floors_import_nothing_above_them(floor: str, allowed: set[str]) -> None:
    members = [module for module in GRAPH if module == floor or module.startswith(floor + ".")]
    outside = {target for member in members for target in reachable(member) if target not in members}
    assert outside <= allowed


@pytest.mark.parametrize("module", ["pipeline.objectives", "pipeline.kernels", "pipeline.workflow.configure", "pipeline.analysis.runs"])
def test_the_registries_and_the_planner_import_without_torch(module: str) -> None:
    """The report and Snakemake's planning read the objective registry; torch (seconds to
    import, gigabytes on a GPU machine) belongs to the stages that train."""
    check = f"import sys, {module}; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", check], cwd=REPO).returncode == 0, f"importing {module} imports torch"


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("pipeline.report.render", "pipeline.analysis.aggregate"),
        ("pipeline.analysis.claims", "pipeline.analysis.aggregate"),
        ("pipeline.analysis.claims.spec", "pipeline.report.render"),
        ("pipeline.pretrain.plan", "pipeline.workflow.configure"),
        ("pipeline.data.sources", "pipeline.data.sources.wikitext"),  # mwparserfromhell only when Wikipedia is read
        ("pipeline.data.sources", "pipeline.staging.mirror"),  # the readers read the mirror; rewriting configs is above them
        ("pipeline.data.sources", "pipeline.workflow.stage"),
    ],
)
def test_stages_stay_apart(module: str, forbidden: str) -> None:
    assert forbidden not in reachable(module)


def members_of(package: str) -> list[str]:
    return [module for module in GRAPH if module == package or module.startswith(package + ".")]


def test_the_analysis_renders_nothing_and_the_readers_of_outside_results_stay_below_it() -> None:
    """analysis/ computes what the report shows and never reaches rendering; external/ (readers
    of the study's published and released results) reaches neither side."""
    for module in members_of("pipeline.analysis"):
        assert not [m for m in reachable(module) if m.startswith("pipeline.report")], module
    for module in members_of("pipeline.external"):
        assert not [m for m in reachable(module) if m.startswith(("pipeline.report", "pipeline.analysis"))], module


def test_staging_sits_below_the_readers_of_the_mirror_and_the_commands_that_fill_it() -> None:
    """staging/ (the mirror's references, clients, layout and manifest) is what the data, tokenizer
    and model readers verify a staged file against: it reaches none of them, nor workflow/, whose
    configure rewrites a config to read the mirror and whose stage command fills it."""
    above = ("pipeline.data", "pipeline.tokenization", "pipeline.model", "pipeline.workflow")
    for module in members_of("pipeline.staging"):
        assert not [m for m in reachable(module) if m.startswith(above)], module


def test_the_report_computes_no_statistic() -> None:
    """report/ formats what the aggregate wrote: no module of it imports the statistics
    (pipeline/analysis/stats.py: means, intervals, differences, power) to compute one itself."""
    computing = [module for module in members_of("pipeline.report") if "pipeline.analysis.stats" in GRAPH[module]]
    assert computing == []


def registry_members() -> list[str]:
    """Every module that a registry's load_members imports (pipeline/registry.py)."""
    registries = [module for module, path in MODULES.items() if path.name == "__init__.py" and "load_members(__name__" in path.read_text()]
    return sorted(m for m in MODULES if any(m.rpartition(".")[0] == registry for registry in registries))


def test_registry_members_only_define_and_register_at_their_top_level() -> None:
    """A job's code hash covers only the members it uses (pipeline/code_graph.py: job_graph); that is
    sound because loading a member can change nothing beyond its own names and its registration:
    no top-level statement but imports, definitions, assignments to its own names and register calls."""
    members = registry_members()
    assert {"pipeline.objectives.ul2", "pipeline.metrics.span_f1", "pipeline.analysis.claims.headline"} <= set(members)
    defining = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.If)  # if: TYPE_CHECKING blocks
    for module in members:
        for node in ast.parse(MODULES[module].read_text()).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
                assert all(isinstance(n, ast.Name) for n in names), f"{module}:{node.lineno} assigns beyond its own names"
            elif isinstance(node, ast.Expr):
                value = node.value
                is_docstring = isinstance(value, ast.Constant) and isinstance(value.value, str)
                while isinstance(value, ast.Call):  # register(...)(fn) registers too
                    value = value.func
                is_registration = isinstance(value, ast.Name) and value.id.startswith("register") and node.value is not value
                assert is_docstring or is_registration, f"{module}:{node.lineno}: a top-level call other than a registration"
            else:
                assert isinstance(node, defining), f"{module}:{node.lineno}: {type(node).__name__} at the top level"


def test_no_file_in_the_package_is_longer_than_a_sitting() -> None:
    long = {str(path.relative_to(REPO)): n for path in MODULES.values() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


# ------------------------------------------------------------------ claims as data

CLAIMS = read_claims(REPO / "config" / "claims.yaml")


def claimed_numbers(value: object) -> list[float]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, (list, tuple)):
        return [n for item in value for n in claimed_numbers(item)]
    if isinstance(value, dict):
        return [n for item in value.values() for n in claimed_numbers(item)]
    return []


def numbers_in(sentence: str) -> list[float]:
    """Every number of a sentence as written: ``10,000`` -> 10000, ``15%`` -> 15."""
    return [float(text.replace(",", "")) for text in re.findall(r"\d[\d,]*(?:\.\d+)?", sentence)]


@pytest.mark.parametrize("claim", CLAIMS, ids=[claim.id for claim in CLAIMS])
def test_every_claimed_number_occurs_in_its_claim(claim) -> None:
    claimed = [n for name, value in vars(claim.params).items() if name.startswith("claimed_") for n in claimed_numbers(value)]
    written = numbers_in(claim.claim)
    missing = [n for n in claimed if not any(math.isclose(n, w) for w in written)]
    assert missing == [], f"{claim.id}: {missing} not in {claim.claim!r}"


def test_claim_ids_live_in_the_claims_file_only() -> None:
    ids = {claim.id for claim in CLAIMS}
    pattern = re.compile(r"""["'](%s)["']""" % "|".join(sorted(ids)))
    quoting = [str(path.relative_to(REPO)) for path in MODULES.values() if pattern.search(path.read_text())]
    assert quoting == []


def test_the_claims_file_states_numbers_in_most_claims() -> None:
    # Guards the test above against passing by finding no claimed_* parameter at all.
    with_numbers = [claim.id for claim in CLAIMS if any(name.startswith("claimed_") for name in vars(claim.params))]
    assert len(with_numbers) >= 12
