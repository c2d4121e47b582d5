"""``sortie reconcile`` and ``sortie ledger verify | backup | restore``: keeping the record true.

Each command exits 0 only when the outcome it reports is a success: a ledger
that fails verification, a reconcile that finds the vehicle holding something
else (FAILED) or cannot read it (still UNCERTAIN) exit 2 with their code.
The work is the authority's (``flows.authority``: reconcile and backup through
it, a server's included; verify and restore on its host, ``flows.authority.host``),
imported when a command runs, so ``sortie --help`` stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, console, run

__all__ = ["ledger_app"]

ledger_app = typer.Typer(help="Check, back up and restore the ledger.", no_args_is_help=True)
app.add_typer(ledger_app, name="ledger")


HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="The SORTIE_HOME whose ledger this is (on the authority's host: its --home)."),
]


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

    def work() -> dict[str, Any]:
        from flows.authority.choice import authority

        # with --home: the authority's own host; else the embedded ledger, or a client of SORTIE_SERVER
        a = authority("sortie reconcile", as_user=as_user, world=world, now=now, home=home)
        return a.reconcile(draft_id, link=link, timeout_s=timeout)

    run(work, as_json, lambda d: _say(f"{d['draft_id']} v{d['version']}: dispatch {d['status']}, draft "
                                      f"{d['draft_status']} — {d['message']}"))


AgainstOpt = Annotated[
    list[str] | None,
    typer.Option("--against", help="An anchor the ledger must still hold: an ANCHOR.json file, a backup folder, or "
                                   "prefect:KEY (the artifact the backup-ledger flow publishes). Repeatable."),
]


def _anchors(values: list[str] | None) -> list[tuple[str, dict[str, Any]]]:
    """Each ``--against`` value read as an anchor (``prefect:KEY`` from the Prefect API)."""
    from flows.authority.host import read_anchor

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
        from flows.authority.host import verify_ledger

        anchors = _anchors(against)
        return verify_ledger(home, full=not since_checkpoint, against=anchors) | {
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
        from flows.authority.choice import authority

        # with --home (or without a server): a backup of the ledger here; else the server's, sent to an admin
        return authority("sortie ledger backup", home=home).ledger_backup(dest)

    run(work, as_json, lambda d: _say(f"backed up {d['entries']} entries ({d['bytes']} bytes) to {d['dir']}; "
                                      "verified"))


@ledger_app.command("restore")
def restore_cmd(
    src: Annotated[Path, typer.Argument(help="A folder made by `sortie ledger backup`.")],
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """Verify a backup and put it in place of the ledger (the current file is moved aside, not deleted)."""

    def work() -> dict[str, Any]:
        from flows.authority.host import restore_ledger

        return restore_ledger(home, src)

    run(work, as_json, lambda d: _say(f"restored {d['entries']} entries from {d['restored_from']}; verified"
                                      + (f"; moved aside: {', '.join(d['moved_aside'])}" if d["moved_aside"] else "")))
