"""``sortie reconcile`` and ``sortie ledger verify | backup | restore``: keeping the record true.

Each command exits 0 only when the outcome it reports is a success: a ledger
that fails verification, a reconcile that finds the vehicle holding something
else (FAILED) or cannot read it (still UNCERTAIN) exit 2 with their code.
The work is in ``flows.integrity`` (imported when a command runs, so
``sortie --help`` stays light).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, console, run
from flows.context import resolve_now
from planner.errors import InvalidArgument

__all__ = ["ledger_app"]

ledger_app = typer.Typer(help="Check, back up and restore the ledger.", no_args_is_help=True)
app.add_typer(ledger_app, name="ledger")


HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="The SORTIE_HOME whose ledger this is (on the authority's host: its --home)."),
]


def _open(home: Path | None) -> Any:
    """The ledger of ``--home`` (default SORTIE_HOME). With a server configured, the ledger is the server's:
    these commands run on its host with its ``--home``, never against a client's own folder."""
    import os

    from flows.ledger import Ledger, LEDGER_FILE, open_ledger
    from flows.ledger.signing import KeyStore

    if home is None and os.environ.get("SORTIE_SERVER"):
        raise InvalidArgument(
            "SORTIE_SERVER is set: the ledger belongs to the authority; run this on its host with --home DIR"
        )
    if home is not None and (Path(home) / "server.json").is_file():  # the authority's home: its keys sign as server
        return Ledger(Path(home) / LEDGER_FILE, keys=KeyStore(home, mode="server"))
    return open_ledger(home)


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False)


@app.command("reconcile")
def reconcile_cmd(
    draft_id: DraftArg,
    link: Annotated[
        str | None, typer.Option("--link", help="pymavlink connection string (default: the one the dispatch used).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed for reading each vehicle back.")] = 30.0,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
    home: HomeOpt = None,
) -> None:
    """Settle an UNCERTAIN (or died-while-PENDING) dispatch by reading the vehicle back; never re-sends."""
    import os

    actor = as_user or os.environ.get("SORTIE_USER")

    def work() -> dict[str, Any]:
        from flows.cli.backend import refuse_overrides, server_url
        from flows.integrity.reconcile import reconcile

        if server_url() is not None and home is None:  # a client: the server reads the vehicle back
            from flows.client.http import SortieClient
            from planner.errors import OverrideRefused

            refuse_overrides("reconcile", as_user=as_user, world=world, now=now)
            if link:
                raise OverrideRefused("`sortie reconcile --link` with SORTIE_SERVER set: the server reads each "
                                      "vehicle back at its own record of the link address",
                                      details={"refused": ["--link"], "command": "reconcile"})
            return SortieClient.from_env().reconcile(draft_id, timeout_s=min(timeout, 120.0))

        if not actor:
            raise InvalidArgument("who is acting? give --as USER or set SORTIE_USER")
        return reconcile(draft_id, actor=actor, now=resolve_now(now), link=link, world_dir=world, timeout_s=timeout,
                         ledger=_open(home))

    run(work, as_json, lambda d: _say(f"{d['draft_id']} v{d['version']}: dispatch {d['status']}, draft "
                                      f"{d['draft_status']} — {d['message']}"))


AgainstOpt = Annotated[
    list[str] | None,
    typer.Option("--against", help="An anchor the ledger must still hold: an ANCHOR.json file, a backup folder, or "
                                   "prefect:KEY (the artifact the backup-ledger flow publishes). Repeatable."),
]


def _anchors(values: list[str] | None) -> list[tuple[str, Any]]:
    """Each ``--against`` value read as an anchor (``prefect:KEY`` from the Prefect API)."""
    from flows.ledger.checkpoints import read_anchor

    out = []
    for value in values or []:
        if value.startswith("prefect:"):
            from flows.orchestration.backup_flow import read_anchor_artifact

            out.append((value, read_anchor_artifact(value.removeprefix("prefect:"))))
        else:
            out.append((value, read_anchor(Path(value).expanduser())))
    return out


@ledger_app.command("verify")
def verify_cmd(
    as_json: JsonOpt = False,
    home: HomeOpt = None,
    against: AgainstOpt = None,
    since_checkpoint: Annotated[bool, typer.Option(
        "--since-checkpoint", help="Walk only the entries after the last signed checkpoint (what a server checks "
                                   "on start), plus the one-query checks over every row.")] = False,
) -> None:
    """Walk the hash chain, every draft's states, every approval signature and dispatch row; name the first break.

    Other processes keep reading and writing meanwhile (the walk runs on a copy, or on a server's snapshot). A
    clean walk is recorded as a signed checkpoint. ``--against`` also checks published anchors: a ledger rolled
    back to an older copy (with its own valid head) fails here.
    """

    def work() -> dict[str, Any]:
        from flows.integrity.verify import verify_ledger

        anchors = _anchors(against)
        return verify_ledger(_open(home), full=not since_checkpoint, against=anchors).to_dict() | {
            "against": [name for name, _ in anchors]}

    run(work, as_json, lambda d: _say(f"ledger OK: {d['entries']} entries walked ({d['scope']}), {d['drafts']} drafts, "
                                      f"{d['approvals']} signed approvals, head at entry {d['head_seq']}"
                                      + (f"; holds every anchor ({', '.join(d['against'])})" if d["against"] else "")))


@ledger_app.command("backup")
def backup_cmd(
    dest: Annotated[Path, typer.Argument(help="A new (or empty) folder for this backup.")],
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """Copy the ledger consistently (writers wait for the copy), verify the copy, write its manifest."""

    def work() -> dict[str, Any]:
        import os

        from flows.integrity.backup import backup

        if home is None and os.environ.get("SORTIE_SERVER"):
            return _backup_through_server(dest)
        return backup(_open(home), dest)

    run(work, as_json, lambda d: _say(f"backed up {d['entries']} entries ({d['bytes']} bytes) to {d['dir']}; "
                                      "verified"))


def _backup_through_server(dest: Path) -> dict[str, Any]:
    """An admin's client: the server backs its ledger up on its host and sends the copy, kept here in ``dest``
    and checked against the manifest's sha256 (the signing key stays on the host)."""
    import base64
    import hashlib
    import json

    from flows.client.http import SortieClient
    from flows.integrity.backup import MANIFEST
    from planner.errors import LedgerTampered

    out = Path(dest)
    if out.exists() and any(out.iterdir()):
        raise InvalidArgument(f"the backup folder {out} is not empty: give a new folder per backup")
    got = SortieClient.from_env().ledger_backup(include_files=True)
    files = {name: base64.b64decode(data) for name, data in got.pop("files").items()}
    manifest = json.loads(files[MANIFEST])
    if hashlib.sha256(files[manifest["file"]]).hexdigest() != manifest["sha256"]:
        raise LedgerTampered("the backup the server sent does not match its own manifest (sha256)")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out / Path(name).name).write_bytes(data)
    return {**got, "server_dir": got["dir"], "dir": str(out)}


@ledger_app.command("restore")
def restore_cmd(
    src: Annotated[Path, typer.Argument(help="A folder made by `sortie ledger backup`.")],
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """Verify a backup and put it in place of the ledger (the current file is moved aside, not deleted)."""

    def work() -> dict[str, Any]:
        from flows.integrity.backup import restore

        return restore(_open(home), src)

    run(work, as_json, lambda d: _say(f"restored {d['entries']} entries from {d['restored_from']}; verified"
                                      + (f"; moved aside: {', '.join(d['moved_aside'])}" if d["moved_aside"] else "")))
