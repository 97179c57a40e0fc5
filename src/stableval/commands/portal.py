"""``stableval portal ...``: the evaluation portal's admin tasks, on the database directly, without the web server:
migrate, create tracks (their flags come from the declared track settings, :mod:`stableval.portal.settings`),
routing, import questions, create invites, revoke invites / raters / sessions, diagnostics, adaptive assignment,
proposed questions and quality control. Exporting (``stableval portal export``, also ``stableval export``) lives in
:mod:`stableval.commands.export`, which adds the :data:`portal_app` group declared here, and itself to it; the web
server is ``stableval serve`` (:mod:`stableval.commands.serve`).
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.commands import Group
from stableval.commands.common import OutputOpt, bad_input_exits, fail, record_options
from stableval.commands.output import say
from stableval.portal.settings import CHANGEABLE, PROPOSAL_STATUSES, SETTINGS, TEXT_KINDS
from stableval.portal.tasks.registry import task_names

if TYPE_CHECKING:  # pragma: no cover
    from stableval.portal.settings import TrackSettings
    from stableval.portal.store.db import Database

__all__ = ["DEFAULT_DB", "DatabaseOpt", "TaskName", "open_database", "portal_app", "require_existing"]

DEFAULT_DB = "sqlite:///stableval-portal.db"

DatabaseOpt = Annotated[str, typer.Option(
    "--database-url", envvar="STABLEVAL_PORTAL_DATABASE_URL",
    help=f"SQLAlchemy URL: sqlite:///FILE (one file; default {DEFAULT_DB}, i.e. stableval-portal.db in the "
         "current folder) or postgresql+psycopg://user:password@host:5432/name.")]


portal_app = typer.Typer(help="Portal admin tasks without the web server: migrate, tracks, question import, "
                              "invites, export.", no_args_is_help=True, cls=Group)


def open_database(url: str) -> Database:
    """The portal database at ``url``, its schema created or upgraded; a clear error exit when the portal extra
    is missing or the database cannot be opened."""
    try:
        from stableval.portal.store.db import Database
    except ModuleNotFoundError as error:
        raise fail(f"the portal needs the 'portal' extra ({error.name} is missing): "
                   "pip install 'stableval[portal]'") from None
    db = Database(url)
    try:
        db.upgrade()
    except Exception as error:  # connection refused, bad URL, permissions: say which
        raise fail(f"cannot open the database {url}: {error.__class__.__name__}: {error}") from None
    return db


def require_existing(url: str) -> None:
    """Exit with an error (code 1) when ``url`` names a SQLite file that does not exist: reading commands must not
    create an empty database by accident (a typo in the path would otherwise export nothing, silently)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception as error:
        raise fail(f"bad --database-url {url!r}: {error}") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:") and \
            not Path(str(parsed.database)).exists():
        raise fail(f"no portal database at {parsed.database} (from --database-url {url}): give the URL of an "
                   "existing database, or create one with 'stableval serve' or 'stableval portal migrate'")


@portal_app.command("migrate")
def migrate(database_url: DatabaseOpt = DEFAULT_DB) -> None:
    """Create or upgrade the portal's database schema (Alembic)."""
    open_database(database_url)
    typer.echo(f"database {database_url} is up to date", err=True)


def _choices(name: str, *values: str) -> Any:
    """A typer choice (a string enum whose members are named after their values: ``X.revoke_invite``)."""
    return StrEnum(name, {value.replace("-", "_"): value for value in values})


#: ``--task``: the registered task types (:func:`stableval.portal.tasks.registry.task_names`).
if TYPE_CHECKING:
    TaskName = StrEnum
else:
    TaskName = _choices("TaskName", *task_names())
#: The settings whose allowed values come from a registry rather than their declaration.
_REGISTERED = {"task": TaskName}


def _setting_flags() -> list[tuple[str, Any, Any]]:
    """One flag per track setting a command line can carry, from its declaration
    (:data:`stableval.portal.settings.SETTINGS`): its spelling, help (with what is allowed and the default) and
    default; the checks are :func:`~stableval.portal.admin.manage.track_problems`' (the web form's words)."""
    flags = []
    for name, option in SETTINGS.items():
        if option.kind not in TEXT_KINDS:
            continue  # set from Python only
        kind: Any = _REGISTERED.get(name) or (
            _choices(f"{name.title()}Choice", *option.choices) if option.choices else option.kind)
        default = None if option.default is None else kind(option.default)
        spelling = f"{option.cli}/--no-{option.cli[2:]}" if option.kind is bool and "/" not in option.cli else \
            option.cli  # a yes/no setting can be turned off again (portal track --change)
        shown = typer.Option(spelling, help=option.describe(), show_default=False)
        flags.append((name, Annotated[kind if default is not None else kind | None, shown], default))
    return flags


def _settings_record(values: dict[str, Any]) -> TrackSettings:
    """The flags' values as the track's settings (text parsed as its declaration says)."""
    from stableval.portal.settings import track_settings

    given = {}
    for name, value in values.items():
        if isinstance(value, StrEnum):
            value = value.value
        parse = SETTINGS[name].parse
        if isinstance(value, str) and parse is not None:
            value = parse(value)
        if value is not None:
            given[name] = value
    return track_settings(**given)


@portal_app.command("track")
@record_options("settings", _setting_flags(), _settings_record)
def track(
    context: typer.Context,
    slug: Annotated[str, typer.Argument(help="Short name: lower-case letters, digits, '-' or '_'.")],
    settings: TrackSettings,
    change: Annotated[bool, typer.Option("--change", help="Change an existing track instead: only the flags given, "
                                         "which must be among " + ", ".join(SETTINGS[name].cli for name in
                                                                            CHANGEABLE) + " (the others are fixed "
                                         "once the track exists; an empty --title is the track's name again).")
                      ] = False,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Create an evaluation track, or change one with --change (every setting: see docs/portal.md, 'Track
    settings')."""
    from stableval.portal.admin.manage import change_track, create_track

    if change:
        given = _given_settings(context)
        fixed = [name for name in given if name not in CHANGEABLE]
        if fixed:
            raise typer.BadParameter("fixed once the track exists; --change takes only "
                                     + ", ".join(SETTINGS[name].cli for name in CHANGEABLE),
                                     param_hint=SETTINGS[fixed[0]].cli)
        if not given:
            raise typer.BadParameter("nothing to change: give one of "
                                     + ", ".join(SETTINGS[name].cli for name in CHANGEABLE), param_hint="--change")
        require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        if change:
            change_track(db, slug, **{name: getattr(settings, name) for name in given})
        else:
            create_track(db, slug, settings)
    typer.echo(f"{'changed' if change else 'created'} track {slug}", err=True)


def _given_settings(context: typer.Context) -> list[str]:
    """The track settings whose flags the command line gave."""
    return [name for name in SETTINGS if getattr(context.get_parameter_source(name), "name", "") == "COMMANDLINE"]


@portal_app.command("routing")
def routing(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    specialties: Annotated[str | None, typer.Option("--specialties", help="The new comma-separated specialty list "
                                                    "(refused if it leaves out a specialty still used by the "
                                                    "track's questions, pending proposals or raters).")] = None,
    no_list: Annotated[bool, typer.Option("--no-specialty-list", help="Drop the specialty list: free text "
                                          "again.")] = False,
    fallback: Annotated[str | None, typer.Option("--fallback", help="specialty, general or any (see "
                                                 "stableval portal track --help).")] = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Show or change a track's specialty list and fallback (no option: show them)."""
    from stableval.portal.work.scope import routing_of, set_routing

    if no_list and specialties is not None:
        raise typer.BadParameter("give --specialties or --no-specialty-list, not both", param_hint="--specialties")
    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        now = routing_of(db, slug)
        if no_list or specialties is not None or fallback is not None:
            now = set_routing(db, slug, specialties=None if no_list else now.specialties if specialties is None
                              else specialties, fallback=now.fallback if fallback is None else fallback)
            typer.echo(f"changed the routing of track {slug}", err=True)
    sys.stdout.write(f"specialties: {', '.join(now.specialties) if now.specialties else '(no list: free text)'}\n"
                     f"fallback: {now.fallback}\n")


@portal_app.command("import")
def import_(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    file: Annotated[Path, typer.Argument(help="CSV, TSV, JSONL or Parquet with columns id, prompt, model_a, "
                                              "answer_a, model_b, answer_b [, reference, specialty, subspecialty, "
                                              "gold] (pairwise tracks); other task types: see docs/portal.md.")],
    task: Annotated[TaskName | None, typer.Option("--task", help="Check that the track has this task type (the "
                                                  "file is read as the track's task type either way).")] = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Import questions and model answers into a track (all rows or none)."""
    from stableval.portal.admin.manage import import_questions

    db = open_database(database_url)
    with bad_input_exits():
        count = import_questions(db, slug, file, task=None if task is None else task.value)
    typer.echo(f"imported {count} questions into {slug}", err=True)


@portal_app.command("invites")
def invites(
    base_url: Annotated[str, typer.Option("--base-url", help="Public address of the portal, for the links.")],
    count: Annotated[int, typer.Option("--count", min=0, help="Invites without a note.")] = 0,
    from_file: Annotated[Path | None, typer.Option("--from", help="CSV/JSONL of invitees (column note, email or "
                                                                  "name): one invite each.")] = None,
    tracks: Annotated[list[str] | None, typer.Option("--track", help="Limit the invites to this track (repeat for "
                                                     "several; default: every track).")] = None,
    output: OutputOpt = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Create invite links (CSV: rater, note, link). The links are shown once; only their hashes are stored."""
    from stableval.portal.admin.manage import create_invites, read_invite_notes

    notes = [""] * count
    if from_file is not None:
        with bad_input_exits():
            notes += read_invite_notes(from_file)
    if not notes:
        raise typer.BadParameter("give --count N or --from FILE", param_hint="--count")
    db = open_database(database_url)
    with bad_input_exits():
        created = create_invites(db, notes, tracks=tracks)
    import pandas as pd

    from stableval.portal.admin.export import defuse_formulas

    frame = pd.DataFrame({"rater": [f"rater-{i.rater_id}" for i in created], "note": [i.note for i in created],
                          "link": [i.link(base_url) for i in created]})
    text = defuse_formulas(frame).to_csv(index=False)  # the notes come from a file: safe to open in a spreadsheet
    if output is None:
        sys.stdout.write(text)
    else:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # links are secrets
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        say(f"wrote {len(created)} invite links to {output}")


def _rater_number(rater_id: str, hint: str) -> str:
    """The number of a rater given as ``rater-7`` or ``7`` (a usage error otherwise)."""
    number = rater_id.removeprefix("rater-")
    if not (number.isascii() and number.isdigit() and len(number) < 12):
        raise typer.BadParameter(f"{rater_id!r} is not a rater id; use rater-7 or 7", param_hint=hint)
    return number


RaterAction = StrEnum("RaterAction", [("revoke_invite", "revoke-invite"), ("new_invite", "new-invite"),
                                      ("end_sessions", "end-sessions"), ("disable", "disable"), ("enable", "enable")])


@portal_app.command("rater")
def rater(
    rater_id: Annotated[str, typer.Argument(help="The rater: rater-7 or 7 (as on the admin page and in exports).")],
    action: Annotated[RaterAction, typer.Argument(
        help="revoke-invite (the link stops working), new-invite (new link, old one stops working), "
             "end-sessions (signed out in every browser), disable (no sign-in, no work; open questions go back "
             "to the pool; submissions kept), enable.")],
    base_url: Annotated[str | None, typer.Option("--base-url", help="Public address of the portal, for the new "
                                                                     "link (new-invite).")] = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Revoke a rater's invite link, issue a new one, sign them out everywhere, disable or enable them."""
    from stableval.portal.admin import manage

    number = _rater_number(rater_id, "RATER_ID")
    if action is RaterAction.new_invite and not base_url:
        raise typer.BadParameter("new-invite needs --base-url (the portal's public address)", param_hint="--base-url")
    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        if action is RaterAction.new_invite:
            invite = manage.reissue_invite(db, int(number))
            sys.stdout.write(invite.link(str(base_url)) + "\n")
        elif action is RaterAction.revoke_invite:
            manage.revoke_invite(db, int(number))
        elif action is RaterAction.end_sessions:
            manage.end_rater_sessions(db, int(number))
        else:
            manage.set_rater_disabled(db, int(number), action is RaterAction.disable)
    typer.echo(f"rater-{number}: {action.value} done", err=True)


@portal_app.command("diagnostics")
def diagnostics(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Live rater diagnostics of a track (CSV), as on the admin track page: a STABLEVAL fit of its ratings
    (pairwise, single, mcq tracks), or each rater's reliability under the rater-aware ranking model (ddx and
    rank-documents tracks: Rater-PL, with its 95% interval and top agreement)."""
    import pandas as pd

    from stableval.portal.admin.live_diagnostics import track_diagnostics
    from stableval.portal.admin.order_agreement import track_order_agreement

    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        order = track_order_agreement(db, slug, cache=False)
        if order.measure:  # a ranking track
            if order.message:
                typer.echo(order.message, err=True)
            typer.echo(f"measure: {order.measure}", err=True)
            table = pd.DataFrame([{"rater": r.rater, "answers": r.answers, "compared": r.compared,
                                   "reliability": r.score, "ci_low": r.ci_low, "ci_high": r.ci_high,
                                   "top_agreement": r.top_agreement, "flags": "; ".join(r.flags)}
                                  for r in order.raters],
                                 columns=["rater", "answers", "compared", "reliability", "ci_low", "ci_high",
                                          "top_agreement", "flags"])
            sys.stdout.write(table.round(4).to_csv(index=False))
            return
        live = track_diagnostics(db, slug, cache=False)
    if live.message:
        typer.echo(live.message, err=True)

    frame = pd.DataFrame([{"rater": d.rater, "ratings": d.ratings, "accuracy": d.accuracy, "consensus": d.consensus,
                           "leniency": d.leniency, "strictness": d.strictness, "over_rating": d.over_rating,
                           "under_rating": d.under_rating, "spammer_score": d.spammer_score,
                           "flags": "; ".join(d.flags)} for d in live.raters],
                         columns=["rater", "ratings", "accuracy", "consensus", "leniency", "strictness",
                                  "over_rating", "under_rating", "spammer_score", "flags"])
    sys.stdout.write(frame.round(4).to_csv(index=False))


@portal_app.command("adaptive")
def adaptive(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    refresh_now: Annotated[bool, typer.Option("--refresh/--no-refresh", help="Refit the adaptive model (STABLEVAL) "
                                              "and update the quotas first.")] = True,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Adaptive assignment of a track (CSV): per question, confirmed ratings, extra raters beyond k, confidence."""
    from sqlalchemy import func, select

    from stableval.portal.store.models import Question, Submission, Track
    from stableval.portal.work.adaptive import refresh, track_quotas

    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        fit = refresh(db, slug, force=True) if refresh_now else None
    with db.reading() as session:
        track = session.scalars(select(Track).where(Track.slug == slug)).one_or_none()
        if track is None:
            raise fail(f"no such track: {slug}")
        questions = session.execute(select(Question.id, Question.external_id).where(
            Question.track_id == track.id, Question.gold == "").order_by(Question.id)).all()
        confirmed = dict(session.execute(select(Submission.question_id, func.count(Submission.id)).join(Question)
                                         .where(Question.track_id == track.id, Submission.flagged.is_(False))
                                         .group_by(Submission.question_id)).all())
        k, max_k = track.k, track.max_k
    if max_k <= k:
        typer.echo(f"track {slug} has no adaptive assignment (max_k {max_k}, k {k}): create it with --max-k",
                   err=True)
    elif fit is not None:
        solver = "L-BFGS iterations of Rater-PL" if fit.confusion.shape[-1] == 0 else "EM iterations"
        typer.echo(f"fitted {fit.submissions} submissions in {fit.n_iter} {solver} "
                   f"({'warm start' if fit.warm else 'cold start'})", err=True)
    quotas = track_quotas(db, slug)
    import pandas as pd

    frame = pd.DataFrame([{"item": external, "confirmed": confirmed.get(q, 0), "k": k,
                           "extra": quotas.get(q, (0, None))[0], "capacity": k + quotas.get(q, (0, None))[0],
                           "confidence": quotas.get(q, (0, None))[1]} for q, external in questions],
                         columns=["item", "confirmed", "k", "extra", "capacity", "confidence"])
    from stableval.portal.admin.export import defuse_formulas

    sys.stdout.write(defuse_formulas(frame.round(4)).to_csv(index=False))


#: ``--status``: a proposal's states (:data:`stableval.portal.settings.PROPOSAL_STATUSES`), or all.
if TYPE_CHECKING:
    ProposalStatus = StrEnum
else:
    ProposalStatus = _choices("ProposalStatus", *PROPOSAL_STATUSES, "all")


@portal_app.command("proposals")
def proposals(
    slug: Annotated[str | None, typer.Argument(help="Track name (default: every track).")] = None,
    status: Annotated[ProposalStatus, typer.Option("--status", help=", ".join(PROPOSAL_STATUSES) + " (an "
                                                  "accepted proposal whose answers were imported) or all; default: "
                                                  "pending.")] = ProposalStatus("pending"),
    output: OutputOpt = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Questions proposed by raters and from the landing page, in the question-import format (CSV; add the
    answers, then import: each id proposed-N attaches its answers to proposal N)."""
    from stableval.portal.admin.export import defuse_formulas
    from stableval.portal.work.question_queue import import_frame, list_proposals

    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        found = list_proposals(db, slug, None if status.value == "all" else status.value)
    text = defuse_formulas(import_frame(found)).to_csv(index=False)
    if output is None:
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
        say(f"wrote {len(found)} proposal(s) to {output}")


ProposalDecision = StrEnum("ProposalDecision", "accept reject")


@portal_app.command("proposal")
def proposal(
    proposal_id: Annotated[int, typer.Argument(help="The proposal's number (as in the proposals list: "
                                                    "proposed-<n>).")],
    decision: Annotated[ProposalDecision, typer.Argument(help="accept or reject.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (required to reject).")] = "",
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Accept or reject a question proposed by a rater."""
    from stableval.portal.work.question_queue import decide

    if decision is ProposalDecision.reject and not reason.strip():
        raise typer.BadParameter("give the reason for rejecting", param_hint="--reason")
    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        decide(db, proposal_id, accept=decision is ProposalDecision.accept, reason=reason)
    typer.echo(f"proposal {proposal_id}: {decision.value}ed", err=True)


QualityDecision = StrEnum("QualityDecision", "allow pause auto")


@portal_app.command("quality")
def quality(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    rater_id: Annotated[str | None, typer.Option("--rater", help="The rater to decide on: rater-7 or 7.")] = None,
    decision: Annotated[QualityDecision | None, typer.Option(
        "--set", help="allow (never paused), pause, or auto (the track's accuracy threshold decides).")] = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Quality control: every rater's accuracy on the track's gold questions (CSV), or --rater R --set DECISION."""
    from stableval.portal.work.quality import set_override, track_quality

    if (rater_id is None) != (decision is None):
        raise typer.BadParameter("give both --rater and --set, or neither (to list)", param_hint="--set")
    require_existing(database_url)
    db = open_database(database_url)
    with bad_input_exits():
        if rater_id is not None and decision is not None:
            number = _rater_number(rater_id, "--rater")
            set_override(db, slug, int(number), decision.value)
            typer.echo(f"rater-{number} in {slug}: {decision.value}", err=True)
            return
        rows = track_quality(db, slug)
    import pandas as pd

    frame = pd.DataFrame({"rater": [f"rater-{r.id}" for r, _ in rows], "name": [r.name for r, _ in rows],
                          "gold_questions": [q.gold_answered for _, q in rows],
                          "gold_flagged": [q.flagged_gold for _, q in rows],
                          "gold_judgments": [q.judgments for _, q in rows], "correct": [q.correct for _, q in rows],
                          "accuracy": [q.accuracy for _, q in rows], "status": [q.status for _, q in rows]})
    from stableval.portal.admin.export import defuse_formulas

    sys.stdout.write(defuse_formulas(frame).to_csv(index=False))
