"""``scout init``: from a clone to your own docs, following only the README.

End to end, as the README's "Your own docs" says: ``scout demo``, then ``scout init --repo`` on a
generated repository of each docs generator (its config file and docs layout written here, the
generator never run) plus the demo's handbook, ``scout index``, ``scout ask``, ``scout serve`` and
the page, no file edited by hand. Then a plain folder (read, never written), the refusals (never
overwrite, nothing written on a mistake), and ``--gitlab`` against the GitLab test server (one
request a group; token and group mistakes are exit 3, an unreachable GitLab exit 5).
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from scout.forge.base import lines_fragment
from scout.init.sites import Site, read_site
from scout.init.sources import web_page
from tests.fakes.serving import running
from tests.gitlab_server.server import GitLabServer
from tests.helpers.growth import assert_linear
from tests.helpers.run import Result, run_cli
from tests.helpers.served import TOKEN, serve_built

pytestmark = pytest.mark.xdist_group("test_init")

FACT = "The frobnicator cache is purged every seven days by the janitor job."
# Pages enough that a word of two is rare: FTS5 gives words in most rows no weight
FILLER = {f"topic{n}.md": f"# Topic {n}\n\nThe gadget{n}zz unit frobs.\n" for n in range(12)}
QUESTION = "When is the frobnicator cache purged?"


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_repo(root: Path, files: dict[str, str], remote: str | None = None) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "docs")
    if remote:
        git(root, "remote", "add", "origin", remote)
    return root


# Each generator's repository as its own documentation lays it out: the config file, where the
# pages are, and the page that holds the fact; then what init must read from it.
GENERATORS: dict[str, tuple[dict[str, str], str, Site | None]] = {
    "mkdocs": (
        {
            "mkdocs.yml": "site_name: Frob\nsite_url: https://frob.example.org/  # the site\n"
            "docs_dir: documentation\nmarkdown_extensions:\n  - admonition\n"
            "theme:\n  name: material\n  icon: !!python/name:material.extensions.emoji.twemoji\n",
            "documentation/index.md": "# Frob\n\nFrob frobnicates.\n",
            "documentation/ops/cache.md": f'# Cache\n\n!!! note "Purging"\n    {FACT}\n',
            "README.md": "# frob\n\nSee the docs.\n",
        },
        "documentation/ops/cache.md",
        Site("mkdocs", "mkdocs.yml", "documentation/", "https://frob.example.org/"),
    ),
    "sphinx": (
        {
            "docs/source/conf.py": "import os\nproject = 'Frob'\nextensions = ['myst_parser']\n"
            "html_baseurl = 'https://frob.readthedocs.io/en/latest/'\nhtml_theme = 'furo'\n",
            "docs/source/index.rst": "Frob\n====\n\n.. toctree::\n\n   cache\n",
            "docs/source/cache.rst": f"Cache\n=====\n\nPurging\n-------\n\n{FACT}\n",
            "frob/conf.py": "DEBUG = False\n",  # some program's conf.py: no pages beside it
        },
        "docs/source/cache.rst",
        Site(
            "sphinx",
            "docs/source/conf.py",
            "docs/source/",
            "https://frob.readthedocs.io/en/latest/",
        ),
    ),
    "docusaurus": (
        {
            "website/docusaurus.config.js": "// @ts-check\nconst config = {\n  title: 'Frob',\n"
            "  url: 'https://frob.dev',\n  baseUrl: '/',\n  presets: [['classic', {\n"
            "    docs: {\n      path: 'docs',\n      routeBasePath: 'guide',\n    },\n  }]],\n};\n"
            "module.exports = config;\n",
            "website/docs/intro.md": "---\nslug: /\n---\n# Intro\n\nFrob frobnicates.\n",
            "website/docs/02-cache.mdx": "import Tabs from '@theme/Tabs';\n\n# Cache\n\n"
            f":::tip Purging\n{FACT}\n:::\n",
        },
        "website/docs/02-cache.mdx",
        Site(
            "docusaurus", "website/docusaurus.config.js", "website/docs/", "https://frob.dev/guide/"
        ),
    ),
    "hugo": (
        {
            "hugo.toml": 'baseURL = "https://frob.example.net/"\ncontentDir = "site"\n'
            'title = "Frob"\n',
            "site/_index.md": '+++\ntitle = "Frob"\n+++\n\nFrob frobnicates.\n',
            "site/docs/cache.md": f'+++\ntitle = "Cache"\n+++\n\n{{{{< note >}}}}\n{FACT}\n'
            "{{< /note >}}\n",
        },
        "site/docs/cache.md",
        Site("hugo", "hugo.toml", "site/", "https://frob.example.net/"),
    ),
    "markdown": (
        {"README.md": "# Frob\n\nFrob frobnicates.\n", "docs/cache.md": f"# Cache\n\n{FACT}\n"},
        "docs/cache.md",
        None,
    ),
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``scout demo`` as scripts/demo runs it, once: its handbook is a repository to init on."""
    folder = tmp_path_factory.mktemp("clone")
    done = run_cli(["demo", "--dir", "scout-demo"], cwd=folder, timeout=300)
    assert done.code == 0, done.stderr
    return folder / "scout-demo" / "estate" / "repos" / "acme" / "handbook"


def scout(folder: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_cli(list(args), cwd=folder, env={**os.environ, **(env or {})}, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("generator", list(GENERATORS))
def test_from_demo_to_your_own_docs_with_no_file_edited(
    tmp_path: Path, demo: Path, generator: str
) -> None:
    files, page, site = GENERATORS[generator]
    repo = make_repo(
        tmp_path / "frob", files, remote=f"git@gitlab.example.com:acme/{generator}.git"
    )
    work = tmp_path / "work"
    work.mkdir()
    inited = scout(
        work, "init", "--repo", str(repo), "--repo", str(demo), env={"PATH": _no_claude()}
    )
    assert inited.code == 0, inited.stderr
    last = inited.stdout.splitlines()[-1]
    assert last.startswith("Next: ") and last.endswith("scout index")
    config = tomllib.loads((work / "scout.toml").read_text(encoding="utf-8"))
    assert config["answer"]["provider"] == "offline"  # no claude on PATH
    sites = {s["project"]: s for s in config.get("docs_site", [])}
    if site is None:
        assert "local/frob" not in sites
    else:
        assert sites["local/frob"] == {
            "url": site.url,
            "project": "local/frob",
            "root": site.root,
            "generator": site.generator,
        }
    assert sites["local/handbook"]["url"] == "https://docs.acme.example/handbook/"
    estate = tomllib.loads((work / "scout-estate" / "estate.toml").read_text(encoding="utf-8"))
    assert [(p["path"], p["repo"], p.get("web_url")) for p in estate["project"]] == [
        ("local/frob", str(repo), f"https://gitlab.example.com/acme/{generator}"),
        ("local/handbook", str(demo), None),
    ]

    indexed = scout(work, "index", "--json")
    assert indexed.code == 0, indexed.stderr
    assert indexed.json()["projects_indexed"] == 2

    asked = scout(work, "ask", QUESTION, "--json")
    assert asked.code == 0, asked.stderr
    document = asked.json()
    head = git(repo, "rev-parse", "HEAD")
    first = document["where_to_look"][0]
    assert (first["project"], first["path"]) == ("local/frob", page)
    start, end = first["lines"]
    anchor = lines_fragment((start, end))
    assert (
        first["url"] == f"https://gitlab.example.com/acme/{generator}/-/blob/{head}/{page}{anchor}"
    )
    lines = (repo / page).read_text(encoding="utf-8").splitlines()[start - 1 : end]
    assert FACT in "\n".join(lines)  # the cited lines hold it
    handbook = scout(work, "ask", "How often are deploy keys rotated?", "--json").json()
    assert handbook["where_to_look"][0]["path"] == "docs/credentials.md"

    with running(work / "scout.toml") as server:
        shown = httpx.post(server.url + "/", data={"question": QUESTION}, timeout=60)
    assert shown.status_code == 200
    assert "Where to look" in shown.text
    assert f'href="{first["url"]}"' in shown.text
    assert f"local/frob · {page}" in shown.text


def test_a_plain_folder_is_read_through_snapshots_and_never_written(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "plants.md").write_text("# Plants\n\nSam waters the office plants.\n")
    (folder / "sub" / "bikes.md").write_text("# Bikes\n\nBikes go in the basement.\n")
    (folder / "photo.png").write_bytes(b"\x89PNG" * 10)
    for name, text in FILLER.items():
        (folder / name).write_text(text)
    (folder / "node_modules" / "x").mkdir(parents=True)
    (folder / "node_modules" / "x" / "README.md").write_text("# dependency\n\nbasement\n")
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    inited = scout("init", "--repo", str(folder), "--provider", "offline", "--json")
    assert inited.code == 0, inited.stderr
    assert inited.json() == {
        "config": str(tmp_path / "scout.toml"),
        "forge": "local",
        "estate": str(tmp_path / "scout-estate"),
        "url": None,
        "groups": ["local"],
        "projects": [
            {
                "path": "local/notes",
                "place": str(folder),
                "kind": "folder",
                "branch": "main",
                "web_url": None,
                "docs": "",
                "files": 2 + len(FILLER),
                "generator": None,
                "site": None,
            }
        ],
        "provider": "offline",
        "next": inited.json()["next"],
    }
    assert inited.json()["next"].endswith(" index")
    assert scout("index").code == 0
    found = scout("search", "basement", "--json").json()
    assert [(r["project"], r["path"]) for r in found] == [("local/notes", "sub/bikes.md")]
    # an edit is read at the next index, as a new snapshot
    (folder / "plants.md").write_text("# Plants\n\nSam waters the office plants on Fridays.\n")
    again = scout("index", "--json").json()
    assert (again["projects_indexed"], again["projects_unchanged"]) == (1, 0)
    assert scout("index", "--json").json()["projects_unchanged"] == 1
    fridays = scout("search", "Fridays", "--json").json()
    assert fridays[0]["path"] == "plants.md" and len(fridays[0]["sha"]) == 40
    # the folder was only read: no .git, nothing changed in it
    changed = {p for p in folder.rglob("*") if before.get(p) != p.stat().st_mtime_ns}
    assert changed == {folder / "plants.md"} and not (folder / ".git").exists()


@pytest.mark.parametrize(
    ("args", "setup", "message"),
    [
        ([], None, "scout: give --repo PATH (local repositories or folders) or --gitlab URL\n"),
        (["--repo", "nowhere"], None, "scout: --repo nowhere: no such folder\n"),
        (["--repo", "empty"], "empty", "scout: --repo empty: no Markdown, reStructuredText or "
         "README file in it: nothing to index\n"),
        (["--repo", "fresh"], "fresh", "scout: --repo fresh: the repository has no commits on "
         "main yet: commit its docs, then run scout init again\n"),
        (["--repo", "docs"], "scout.toml", None),
        (["--repo", "docs"], "scout.db", None),
        (["--repo", "docs"], "scout-estate/x", None),
        (["--repo", "docs", "--repo", "docs/"], None, None),
        (["--repo", "docs", "--gitlab", "https://g.example"], None, None),
        (["--gitlab", "https://g.example"], None, "scout: --gitlab needs --group PATH: the group "
         "(or groups) to read\n"),
        (["--repo", "docs", "--group", "no spaces"], None, None),
        (["--repo", "docs", "--provider", "gpt"], None, None),
    ],
)  # fmt: skip
def test_mistakes_are_exit_2_and_nothing_is_written(
    tmp_path: Path, scout: Callable[..., Result], args: list[str], setup: str | None, message: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    if setup in ("empty", "fresh"):
        (tmp_path / setup).mkdir()
        if setup == "fresh":
            git(tmp_path / setup, "init", "-q", "-b", "main")
            (tmp_path / setup / "a.md").write_text("# A\n")
    elif setup is not None:
        (tmp_path / setup).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / setup).write_text("mine\n")
    before = sorted(p for p in tmp_path.rglob("*") if ".git" not in p.parts)
    done = scout("init", *args)
    assert (done.code, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("scout: ")
    if message:
        assert done.stderr == message
    assert sorted(p for p in tmp_path.rglob("*") if ".git" not in p.parts) == before
    if setup == "scout.toml":
        assert (tmp_path / "scout.toml").read_text() == "mine\n"


# --- GitLab ----------------------------------------------------------------------------------


def build_gitlab(estate: Path, url: str) -> None:
    from scout.demo.builder import EstateBuilder

    builder = EstateBuilder(estate, url=url)
    builder.project("acme/handbook").commit(
        {"docs/cache.md": f"# Cache\n\n{FACT}\n", **FILLER}, "Docs"
    )
    builder.write()


@pytest.fixture
def gitlab(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> Iterator[GitLabServer]:
    yield serve_built(tmp_path / "estate", gitlab_server_factory, build_gitlab)


def test_gitlab_checks_the_token_and_group_with_one_request_then_indexes(
    tmp_path: Path, gitlab: GitLabServer, scout: Callable[..., Result]
) -> None:
    env = {"FROB_TOKEN": TOKEN, "PATH": _no_claude()}
    gitlab.clear_log()
    done = scout(
        "init", "--gitlab", gitlab.url, "--group", "ACME", "--token-env", "FROB_TOKEN", env=env
    )
    assert done.code == 0, done.stderr
    assert [(r.method, r.path) for r in gitlab.log] == [("GET", "/api/v4/groups/ACME")]
    assert done.stdout.splitlines()[0] == (
        f"Wrote {tmp_path / 'scout.toml'}: GitLab at {gitlab.url}, group(s) acme (the token can "
        "see them)."
    )
    written = (tmp_path / "scout.toml").read_text(encoding="utf-8")
    assert TOKEN not in written
    config = tomllib.loads(written)
    assert config["forge"] == {
        "kind": "gitlab",
        "url": gitlab.url,
        "token_env": "FROB_TOKEN",
        "groups": ["acme"],  # as GitLab spells it
    }
    assert scout("index", env=env).code == 0
    found = scout("search", QUESTION, "--json", env=env).json()
    assert found[0]["path"] == "docs/cache.md"


@pytest.mark.parametrize(
    ("group", "token", "code", "message"),
    [
        ("acme", None, 3, "scout: --token-env: $FROB_TOKEN is not set: export it with a GitLab "
         "token that can read the groups (the read_api scope), then run scout init again\n"),
        ("acme", "glpat-wrong", 3, "scout: GitLab at {url} refused the token in $FROB_TOKEN: "
         "check it is a token of this instance, not expired, with the read_api scope\n"),
        ("acmee", TOKEN, 3, "scout: --group acmee: GitLab at {url} has no group 'acmee' that the "
         "token in $FROB_TOKEN can see: check the group's full path (as in its URL) and the "
         "token's access\n"),
    ],
)  # fmt: skip
def test_gitlab_mistakes_are_exit_3_with_one_request_and_nothing_written(
    tmp_path: Path,
    gitlab: GitLabServer,
    scout: Callable[..., Result],
    group: str,
    token: str | None,
    code: int,
    message: str,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FROB_TOKEN"}
    if token:
        env["FROB_TOKEN"] = token
    gitlab.clear_log()
    done = run_cli(
        ["init", "--gitlab", gitlab.url, "--group", group, "--token-env", "FROB_TOKEN"],
        cwd=tmp_path,
        env=env,
    )
    assert (done.code, done.stdout, done.stderr) == (code, "", message.format(url=gitlab.url))
    assert len(gitlab.log) == (0 if token is None else 1)
    assert not (tmp_path / "scout.toml").exists()


def test_gitlab_unreachable_is_exit_5_and_nothing_written(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    done = scout(
        "init", "--gitlab", "http://127.0.0.1:9", "--group", "acme", env={"GITLAB_TOKEN": "x"}
    )
    assert (done.code, done.stdout) == (5, ""), done.stderr
    assert done.stderr.startswith(
        "scout: forge unreachable: cannot check --gitlab http://127.0.0.1:9"
    )
    assert done.stderr.count("\n") == 1 and not (tmp_path / "scout.toml").exists()


# --- reading the generators' config files and git remotes ---------------------------------------


@pytest.mark.parametrize(
    ("path", "text", "site"),
    [
        (
            "mkdocs.yml",
            "site_url: 'https://a.example/x'\n",
            Site("mkdocs", "mkdocs.yml", "docs/", "https://a.example/x/"),
        ),
        (
            "sub/mkdocs.yml",
            "docs_dir: ../elsewhere\n",
            Site("mkdocs", "sub/mkdocs.yml", "sub/", None),
        ),
        ("mkdocs.yml", "site_url: ftp://a.example\n", Site("mkdocs", "mkdocs.yml", "docs/", None)),
        (
            "doc/conf.py",
            "html_baseurl = f'https://{x}'\n",
            Site("sphinx", "doc/conf.py", "doc/", None),
        ),
        ("doc/conf.py", "def (\n", Site("sphinx", "doc/conf.py", "doc/", None)),
        ("config.toml", 'title = "not hugo"\n', None),
        ("config.toml", "baseURL = [\n", None),
        (
            "hugo.yaml",
            "baseURL: https://h.example\ncontentDir: pages\n",
            Site("hugo", "hugo.yaml", "pages/", "https://h.example/"),
        ),
        (
            "hugo.json",
            '{"baseURL": "https://h.example/"}',
            Site("hugo", "hugo.json", "content/", "https://h.example/"),
        ),
        (
            "docusaurus.config.ts",
            "export default {url: 'https://d.example', baseUrl: '/p/'}\n",
            Site("docusaurus", "docusaurus.config.ts", "docs/", None),
        ),
        (
            "docusaurus.config.ts",
            "  url: \"https://d.example\",\n  baseUrl: '/p/',\n",
            Site("docusaurus", "docusaurus.config.ts", "docs/", "https://d.example/p/docs/"),
        ),
        (
            "docusaurus.config.js",
            "  url: `https://${HOSTNAME}`,\n  baseUrl: '/docs/',\n  routeBasePath: '/',\n",
            Site("docusaurus", "docusaurus.config.js", "docs/", None),  # filled in at build time
        ),
        (
            "docusaurus.config.js",
            "  url: 'https://stenciljs.com',\n  baseUrl: '/docs/',\n  routeBasePath: '/',\n",
            Site("docusaurus", "docusaurus.config.js", "docs/", "https://stenciljs.com/docs/"),
        ),
        ("README.md", "# not a config\n", None),
    ],
)
def test_generator_configs_are_read_as_text(path: str, text: str, site: Site | None) -> None:
    assert read_site(path, text) == site


@pytest.mark.parametrize(
    ("remote", "page"),
    [
        ("git@gitlab.com:acme/docs.git", "https://gitlab.com/acme/docs"),
        ("https://user:secret@github.com/acme/docs.git", "https://github.com/acme/docs"),
        ("ssh://git@git.example.com:2222/a/b/c.git", "https://git.example.com/a/b/c"),
        ("http://git.local:8080/acme/docs", "http://git.local:8080/acme/docs"),
        ("/var/git/docs.git", None),
        ("../docs", None),
        ("file:///var/git/docs.git", None),
        ("", None),
    ],
)
def test_a_remote_names_the_page_links_are_built_on(remote: str, page: str | None) -> None:
    assert web_page(remote) == page


@pytest.mark.parametrize(
    ("unit", "name"),
    [
        (" ", "mkdocs.yml"),
        ("site_url: ", "mkdocs.yml"),
        ("url: '", "docusaurus.config.js"),
        ("  url   :   ", "docusaurus.config.js"),
        ("a: b #", "hugo.yaml"),
    ],
)
def test_reading_a_config_grows_linearly(unit: str, name: str) -> None:
    def make(n: int) -> Callable[[], object]:
        text = unit * n
        return lambda: read_site(name, text)

    assert_linear(make, 1_000)


@pytest.mark.parametrize("unit", ["a", "a@", "a:", "/", "git@h:" + "a/"])
def test_reading_a_remote_grows_linearly(unit: str) -> None:
    def make(n: int) -> Callable[[], object]:
        text = unit * n
        return lambda: web_page(text)

    assert_linear(make, 200)


def _no_claude() -> str:
    """PATH without a ``claude``: init then writes the offline provider."""
    import shutil

    found = shutil.which("claude")
    parts = os.environ["PATH"].split(os.pathsep)
    return os.pathsep.join(p for p in parts if not found or Path(p) != Path(found).parent)
