"""The house's rules, read from the source: how core/ is grouped and what each group may import,
no import cycles, no page importing another, small files and functions. A newcomer who breaks one
is told here, with the file and the import, before a reviewer has to."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What each group of core/ may import from core (besides itself and core's top-level modules):
# the lesson's math stands alone; engines compute with it; measures read engines' results; the
# cost of attention and its variants may use all three.
CORE_LAYERS = {
    "lesson": set(),
    "models": {"lesson"},
    "measures": {"lesson", "models"},
    "cost": {"lesson", "models", "measures"},
    "train": {"lesson", "models", "measures"},
    "translate": {"lesson", "models", "measures", "train"},  # reuses the decoder's backward steps
}
# the torch reference engines (for encoders, for decoders, for the translator): the only core modules
# that import torch, inside their functions, so that `import core` stays torch-free
TORCH_ENGINES = {"core.models.pretrained", "core.models.pretrained_decoder", "core.translate.pretrained"}
# the notebook bridge: it hands a notebook the figures the pages draw, so it imports dashboard.charts'
# builders (never streamlit), inside its functions, so that `import core` stays free of the UI
UI_BRIDGES = {"core.notebook"}
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(*folders: str) -> dict[str, Path]:
    return {_module_name(p): p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))}


def _imports(path: Path, top_level_only: bool = False, modules: dict | None = None) -> set[str]:
    """Modules `path` imports. `from a import b` counts a.b when that is one of `modules` (or, with
    no `modules` given, always as well as a), a otherwise: importing a package's submodule does
    not run anything of the package's own beyond its __init__."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if modules is None:
                    found.update({node.module, submodule})
                else:
                    found.add(submodule if submodule in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_core_is_grouped_and_each_group_imports_only_what_it_builds_on():
    sources = _sources("core")
    groups = {name.split(".")[1] for name in sources if name.count(".") >= 2}
    assert groups == set(CORE_LAYERS), (
        f"core/ holds packages {sorted(groups)}; the layers name {sorted(CORE_LAYERS)}"
    )
    for name, path in sources.items():
        if name.count(".") < 2:
            continue  # core's top-level modules (the CLI, export, text) may use every group
        group = name.split(".")[1]
        for module in _imports(path):
            parts = module.split(".")
            if parts[0] == "core" and len(parts) > 1 and parts[1] in CORE_LAYERS and parts[1] != group:
                assert parts[1] in CORE_LAYERS[group], f"{path.relative_to(ROOT)} ({group}) imports {module}"


def test_core_never_imports_the_ui_and_only_the_reference_engines_import_torch():
    for name, path in _sources("core").items():
        roots = {module.split(".")[0] for module in _imports(path)}
        ui = {"streamlit"} if name in UI_BRIDGES else {"streamlit", "plotly", "dashboard"}
        assert not roots & ui, f"{path.relative_to(ROOT)} imports the UI"
        if name not in TORCH_ENGINES:
            assert not roots & {"torch", "transformers"}, f"{path.relative_to(ROOT)} imports torch"


def test_no_import_cycles_among_the_products_modules():
    sources = _sources("core", "dashboard")
    graph = {
        name: {m for m in _imports(path, top_level_only=True, modules=sources) if m in sources and m != name}
        for name, path in sources.items()
    }
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                raise AssertionError("import cycle: " + " -> ".join([*trail[trail.index(nxt) :], nxt]))
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_no_page_module_imports_another_page():
    views = ROOT / "dashboard" / "views"
    pages = {p.stem for p in views.iterdir() if p.name != "__init__.py" and not p.name.startswith((".", "_"))}
    assert {"learn", "explore", "compare", "atlas", "cost"} <= pages
    for page in pages:
        files = (views / page).rglob("*.py") if (views / page).is_dir() else [views / f"{page}.py"]
        for path in files:
            for module in _imports(path):
                other = module.split(".")[2] if module.startswith("dashboard.views.") else page
                assert other == page, f"{path.relative_to(ROOT)} imports {module}"


def test_files_and_functions_are_small():
    for path in _sources("core", "dashboard").values():
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        assert source.count("\n") <= MAX_FILE_LINES, f"{where}: {source.count(chr(10))} lines"
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                assert length <= MAX_FUNCTION_LINES, f"{where}: {node.name} has {length} lines"


# What a browser test may not call on a page, its keyboard or mouse, or a locator: it presses keys and
# clicks through tests/e2e/harness.py's press and click, which wait until the page is listening, act,
# and then wait for the change the action should make (a bare `press(...)` is the harness's own).
RAW_ACTIONS = {"press", "click", "dblclick", "tap", "type"}


def test_browser_tests_act_only_through_the_harness():
    raw = []
    for path in sorted((ROOT / "tests" / "e2e").glob("test_*.py")):
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RAW_ACTIONS
        ]
        raw += [
            f"{path.relative_to(ROOT)}:{call.lineno}: .{call.func.attr}(...)"
            for call in sorted(calls, key=lambda call: call.lineno)
        ]
    assert not raw, "a browser test acts through the harness's press and click, not:\n" + "\n".join(raw)
