"""Bounded load run of the evaluation portal on loopback: simulated raters complete questions concurrently.

    python benchmarks/bench_portal.py                         # 100 raters, 4 questions each, 0-4 s between pages
    python benchmarks/bench_portal.py --think 0               # no pause at all: a closed loop at saturation
    python benchmarks/bench_portal.py --database-url postgresql+psycopg://... --workers 2
    python benchmarks/bench_portal.py --cpu --raters 30 --items 2   # CPU ms per page, in process, load-independent

A fresh SQLite file (or the given database, which must be empty) gets one track (k = 3, the five default
criteria) with enough questions for every rater, and one invite per rater. The portal runs as a real ``stableval
serve`` child process (``--workers N`` uvicorn workers) on 127.0.0.1 and a free port (only loopback
is used). Each simulated rater is an httpx client with
its own session cookie that follows the whole rater path — invite link, profile, progress, claim, step 1, step 2,
confirm, submit — page by page (redirects followed one request at a time, so every request is timed on its own),
until it has submitted ``--items`` questions or ``--seconds`` have passed; then the run stops by itself.

Printed: requests and submissions per second, p50/p90/p99/max latency per page (method and route), the server's
CPU time per request (user + system time of the server process and its workers, from /proc, over the timed run),
and the database check: every acknowledged submission (a 303 to ``/progress?saved=1``) is stored exactly once
with its five judgments, nothing is stored that was not acknowledged, and no question has more than k confirmed
ratings. Exit status 1 if the database check fails or a rater met an error (a transport error names the page and
how long the connection had been idle). The clients reuse an idle connection for at most
:data:`CLIENT_KEEPALIVE_SECONDS`, below the server's keep-alive timeout, as a well-behaved client or proxy must.
Goal (issue 15): p99 under 100 ms at 100 concurrent raters with think time, on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd

ADMIN = "bench-admin-token-0123456789"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')
ROUTE_IDS = re.compile(r"/(a|i)/[^/?]+")
LOOPBACK = "127.0.0.1"


@dataclass
class Stats:
    """Latencies (seconds) per page, acknowledged submissions, failures."""

    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    server: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # the app's Server-Timing
    acknowledged: list[int] = field(default_factory=list)  # assignment ids
    errors: list[str] = field(default_factory=list)
    finished: int = 0  # raters who ran out of questions or reached --items


def route(method: str, url: str) -> str:
    path = url.split("?")[0]
    return f"{method} " + ROUTE_IDS.sub(lambda m: f"/{m[1]}/{{{'id' if m[1] == 'a' else 'token'}}}", path)


#: When each client last received a response (to report how long a connection had been idle when it failed).
LAST_RESPONSE: dict[int, float] = {}


async def send(client: httpx.AsyncClient, method: str, url: str,
               data: dict[str, str] | None = None) -> httpx.Response:
    """One request; a transport error names the page and how long this client's connection had been idle."""
    try:
        response = await client.request(method, url, data=data)
    except httpx.TransportError as error:
        idle = time.perf_counter() - LAST_RESPONSE.get(id(client), time.perf_counter())
        raise RuntimeError(f"{error.__class__.__name__} on {route(method, url)} after {idle:.2f} s idle: "
                           f"{error!r}") from error
    LAST_RESPONSE[id(client)] = time.perf_counter()
    return response


SERVER_TIMING = re.compile(r"app;dur=([0-9.]+)")


def record(stats: Stats, page: str, start: float, response: httpx.Response) -> None:
    """The client's latency of one request and the app's own time for it (its ``Server-Timing`` header)."""
    stats.latency[page].append(time.perf_counter() - start)
    found = SERVER_TIMING.search(response.headers.get("server-timing", ""))
    if found:
        stats.server[page].append(float(found.group(1)) / 1000)


async def call(client: httpx.AsyncClient, stats: Stats, method: str, url: str,
               data: dict[str, str] | None = None) -> httpx.Response:
    """One request, timed; redirects are followed one request at a time (each timed under its own route)."""
    while True:
        start = time.perf_counter()
        response = await send(client, method, url, data)
        record(stats, route(method, url), start, response)
        if response.status_code != 303:
            return response
        method, url, data = "GET", response.headers["location"], None


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    if not found:
        raise RuntimeError("page without a CSRF field")
    return found.group(1)


def pairwise_form(csrf: str, criteria: list[str], rng: random.Random) -> tuple[dict[str, str], dict[str, str]]:
    choices = {c: rng.choice(["a", "b", "tie", "neither"]) for c in criteria}
    return {"csrf": csrf, "action": "next", **{f"pw-{c}": v for c, v in choices.items()}}, choices


def rating_form(csrf: str, choices: dict[str, str], rng: random.Random) -> dict[str, str]:
    """Ratings that satisfy the default rules (A better => rating(A) >= rating(B), and the mirror)."""
    form = {"csrf": csrf, "action": "next"}
    for criterion, choice in choices.items():
        low, high = sorted(rng.sample(range(1, 6), 2))
        a, b = (high, low) if choice == "a" else (low, high) if choice == "b" else (low, low if choice == "tie"
                                                                                  else high)
        form[f"ra-{criterion}"], form[f"rb-{criterion}"] = str(a), str(b)
    return form


#: How long a rater's client reuses an idle connection (s). It must stay well below the server's keep-alive timeout
#: (uvicorn's default, 5 s): with httpx's default, also 5 s, a client that paused ~4 s and ran ~1 s late on the
#: loaded machine reused its connection just as the server closed it for being idle, and the server, closing a
#: socket with the new request unread, reset it (httpx ``ReadError`` after 5.1-6.0 s idle; 4-48 per 100-rater run).
CLIENT_KEEPALIVE_SECONDS = 1.0


def new_client(base: str) -> httpx.AsyncClient:
    """One rater's browser: its own cookies. Made before the clock starts (an httpx client builds an SSL context,
    ~30 ms of CPU, which would otherwise stall the shared event loop and inflate the first requests' latency)."""
    return httpx.AsyncClient(base_url=base, follow_redirects=False, timeout=60.0,
                             limits=httpx.Limits(keepalive_expiry=CLIENT_KEEPALIVE_SECONDS))


async def rater(client: httpx.AsyncClient, token: str, criteria: list[str], stats: Stats, items: int,
                deadline: float, think: float, seed: int) -> None:
    rng = random.Random(seed)

    async def pause() -> None:
        if think:
            await asyncio.sleep(rng.uniform(0, 2 * think))

    async with client:
        try:
            await pause()  # raters arrive spread over the think time, not all in the same millisecond
            page = await call(client, stats, "GET", f"/i/{token}")
            await pause()
            page = await call(client, stats, "POST", "/profile", {
                "csrf": csrf_of(page.text), "name": f"Bench rater {seed}", "email": f"r{seed}@example.org",
                "specialty": "internal medicine", "subspecialty": "", "years": "5"})
            if "/progress" not in str(page.url) or page.status_code != 200:
                raise RuntimeError(f"profile not accepted: {page.status_code} at {page.url}")
            done = 0
            while done < items and time.monotonic() < deadline:
                await pause()
                page = await call(client, stats, "POST", "/tracks/main/next", {"csrf": csrf_of(page.text)})
                found = re.search(r"/a/(\d+)/pairwise", str(page.url))
                if not found:
                    break  # nothing left for this rater
                assignment = int(found.group(1))
                await pause()
                form, choices = pairwise_form(csrf_of(page.text), criteria, rng)
                page = await call(client, stats, "POST", f"/a/{assignment}/pairwise", form)
                await pause()
                page = await call(client, stats, "POST", f"/a/{assignment}/rating",
                                  rating_form(csrf_of(page.text), choices, rng))
                token_match = FORM_TOKEN.search(page.text)
                if page.status_code != 200 or not token_match:
                    stats.errors.append(f"rating step of /a/{assignment} answered {page.status_code}")
                    break
                await pause()
                start = time.perf_counter()
                response = await send(client, "POST", f"/a/{assignment}/submit", {
                    "csrf": csrf_of(page.text), "form_token": token_match.group(1)})
                record(stats, "POST /a/{id}/submit", start, response)
                if response.status_code == 303 and response.headers["location"].startswith("/progress?saved=1"):
                    stats.acknowledged.append(assignment)
                    done += 1
                else:
                    stats.errors.append(f"submit of /a/{assignment} answered {response.status_code}")
                    break
                page = await call(client, stats, "GET", response.headers["location"])
            stats.finished += 1
        except (httpx.HTTPError, RuntimeError) as error:
            stats.errors.append(f"{error.__class__.__name__}: {error}")


def run_loop(main: Any) -> None:
    """Run the simulated raters' event loop: uvloop's when installed (the portal extra brings it; its lower
    per-request overhead is less of the client's own lag in the measured latencies), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    uvloop.run(main)


def run_raters(base: str, tokens: list[str], criteria: list[str], items: int, deadline: float, think: float,
               seeds: list[int]) -> Stats:
    """Simulated raters (one invite token and seed each) on one event loop until done or ``deadline``
    (``time.monotonic``); their statistics. Run in this process or in one of ``--client-processes``."""
    stats = Stats()
    clients = [new_client(base) for _ in tokens]

    async def run_all() -> None:
        await asyncio.gather(*(rater(client, token, criteria, stats, items, deadline, think, seed)
                               for client, token, seed in zip(clients, tokens, seeds, strict=True)))

    run_loop(run_all())
    return stats


def merge(into: Stats, part: Stats) -> None:
    """Add one client process's statistics to the run's."""
    for name, values in part.latency.items():
        into.latency[name].extend(values)
    for name, values in part.server.items():
        into.server[name].extend(values)
    into.acknowledged.extend(part.acknowledged)
    into.errors.extend(part.errors)
    into.finished += part.finished


def seed_database(url: str, raters: int, questions: int, k: int) -> tuple[list[str], list[str]]:
    from stableval.portal.admin.manage import create_invites, create_track, import_questions
    from stableval.portal.store.db import Database

    db = Database(url)
    db.upgrade()
    create_track(db, "main", title="Benchmark track", k=k)
    answer = "A long answer. " * 60 + "\n\n* one\n* two\n\n**Bold** and `code`."
    frame = pd.DataFrame({"id": [f"q{i}" for i in range(questions)],
                          "prompt": [f"Question **{i}**: which treatment and why?" for i in range(questions)],
                          "model_a": "TxAgent", "answer_a": answer, "model_b": "GPT-4o", "answer_b": answer})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "questions.csv"
        frame.to_csv(path, index=False)
        import_questions(db, "main", path)
    tokens = [invite.token for invite in create_invites(db, [f"bench-{i}" for i in range(raters)])]
    with db.reading() as session:
        from sqlalchemy import select

        from stableval.portal.store.models import Track

        track = session.scalar(select(Track).where(Track.slug == "main"))
        assert track is not None
        criteria = [c["key"] for c in track.criteria]
    db.dispose()
    return tokens, criteria


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process and all its descendants (Linux /proc; None elsewhere)."""
    proc = Path("/proc")
    if not proc.exists():
        return None
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        times[child] = (int(fields[11]) + int(fields[12])) / tick
    family, frontier = {pid}, [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in family:
                family.add(child)
                frontier.append(child)
    return sum(times.get(p, 0.0) for p in family)


def start_server(url: str, invite_rate: int, workers: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``stableval serve`` on 127.0.0.1 and a free port, in a child process (its log goes to ``log``).

    Every simulated rater comes from 127.0.0.1, so the per-client invite rate limit is raised to ``invite_rate``.
    """
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "stableval", "serve", "--database-url", url, "--host", LOOPBACK, "--port",
               str(port), "--invite-rate", str(invite_rate), "--workers", str(workers)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
                               env={**os.environ, "STABLEVAL_PORTAL_ADMIN_TOKEN": ADMIN})
    base = f"http://{LOOPBACK}:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(base + "/", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start within 60 s")


def check_database(url: str, acknowledged: list[int], k: int, n_criteria: int) -> list[str]:
    """Problems found: acknowledged submissions missing, unacknowledged ones stored, items over k, judgments."""
    from sqlalchemy import func, select

    from stableval.portal.store.db import Database
    from stableval.portal.store.models import Judgment, Submission

    db = Database(url)
    with db.reading() as session:
        stored_list = session.scalars(select(Submission.assignment_id)).all()
        stored = set(stored_list)
        per_item = session.execute(select(Submission.question_id, func.count(Submission.id))
                                   .where(Submission.flagged.is_(False)).group_by(Submission.question_id)).all()
        judgments = session.scalar(select(func.count(Judgment.id))) or 0
    db.dispose()
    acked = set(acknowledged)
    problems = []
    if len(acked) != len(acknowledged):
        problems.append(f"{len(acknowledged) - len(acked)} assignment(s) acknowledged twice")
    if len(stored_list) != len(stored):
        problems.append(f"{len(stored_list) - len(stored)} submission(s) stored twice")
    if acked - stored:
        problems.append(f"{len(acked - stored)} acknowledged submission(s) missing from the database")
    if stored - acked:
        problems.append(f"{len(stored - acked)} stored submission(s) were never acknowledged")
    over = [q for q, n in per_item if n > k]
    if over:
        problems.append(f"{len(over)} question(s) have more than k = {k} confirmed ratings")
    if judgments != n_criteria * len(stored):
        problems.append(f"{judgments} judgments stored for {len(stored)} submissions × {n_criteria} criteria")
    return problems


def report(stats: Stats, wall: float) -> pd.DataFrame:
    """Latency per page as the client saw it (p50/p90/p99/max) and the app's own p50/p99 (``Server-Timing``):
    the difference is time spent queued in the server's event loop and thread pool, in uvicorn, on the
    wire and in the benchmark's own client."""
    def row(name: str, values: list[float], server: list[float]) -> dict[str, Any]:
        ms = np.asarray(values) * 1000
        app = np.asarray(server) * 1000 if server else np.full(1, np.nan)
        return {"page": name, "requests": len(ms), "p50_ms": np.percentile(ms, 50), "p90_ms": np.percentile(ms, 90),
                "p99_ms": np.percentile(ms, 99), "max_ms": ms.max(), "app_p50_ms": np.percentile(app, 50),
                "app_p99_ms": np.percentile(app, 99)}

    frame = pd.DataFrame([row(name, values, stats.server.get(name, [])) for name, values in stats.latency.items()])
    frame = frame.sort_values("page", kind="stable").reset_index(drop=True)
    everything = [v for values in stats.latency.values() for v in values]
    server = [v for values in stats.server.values() for v in values]
    return pd.concat([frame, pd.DataFrame([row("ALL", everything, server)])], ignore_index=True)


def _inline_threadpool() -> None:
    """Run the portal's sync handlers in the calling thread (no worker threads), so the CPU time of a request can be
    read off one thread's clock. For the in-process measurement only."""
    async def inline(func: Any, *args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("starlette", "fastapi", "stableval") and hasattr(module, "run_in_threadpool"):
            module.run_in_threadpool = inline  # type: ignore[attr-defined]


def cpu_in_process(raters: int, items: int, k: int, admin_pages: int = 20) -> pd.DataFrame:
    """CPU milliseconds per page measured inside one process, independent of the machine's load.

    The portal app (SQLite file) is called through ASGI without a socket, one request at a time, with its sync
    handlers run inline; each request's CPU is the thread CPU time (``time.thread_time``) spent inside the app,
    so neither the client nor other processes count. ``raters`` raters each complete ``items`` questions along
    the whole rater path (after one warm-up question), then the admin opens the track page and the start page
    ``admin_pages`` times each.
    """
    from stableval.portal.web.app import create_app

    folder = tempfile.TemporaryDirectory(prefix="bench-portal-cpu-")
    url = f"sqlite:///{Path(folder.name) / 'portal.db'}"
    tokens, criteria = seed_database(url, raters + 1, -(-(raters + 1) * items // k) + raters + 1, k)
    portal = create_app(url, ADMIN, invite_rate=10 * (raters + 1))
    _inline_threadpool()
    cpu: dict[str, list[float]] = defaultdict(list)

    async def timed(scope: Any, receive: Any, send_: Any) -> None:
        start = time.thread_time()
        await portal(scope, receive, send_)
        cpu[route(scope["method"], scope["path"])].append(time.thread_time() - start)

    async def run() -> None:
        transport = httpx.ASGITransport(app=timed)
        stats = Stats()
        await rater(httpx.AsyncClient(transport=transport, base_url="http://portal"), tokens.pop(), criteria,
                    stats, 1, time.monotonic() + 600, 0.0, -1)  # warm-up: templates compiled, statements cached
        cpu.clear()
        for i, token in enumerate(tokens):
            await rater(httpx.AsyncClient(transport=transport, base_url="http://portal"), token, criteria, stats,
                        items, time.monotonic() + 600, 0.0, i)
        admin = httpx.AsyncClient(transport=transport, base_url="http://portal")
        login = await admin.get("/admin/login")
        await admin.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
        for _ in range(admin_pages):
            await admin.get("/admin/tracks/main")
            await admin.get("/admin")
        if stats.errors:
            raise RuntimeError(f"in-process run failed: {stats.errors[:3]}")

    asyncio.run(run())
    folder.cleanup()
    rows = [{"page": page, "requests": len(v), "cpu_median_ms": 1000 * float(np.median(v)),
             "cpu_mean_ms": 1000 * float(np.mean(v))} for page, v in cpu.items() if not page.endswith("/login")]
    frame = pd.DataFrame(rows).sort_values("page", kind="stable").reset_index(drop=True)
    rater_pages = np.concatenate([v for page, v in cpu.items() if " /admin" not in page])
    total = pd.DataFrame([{"page": "ALL rater pages", "requests": rater_pages.size,
                           "cpu_median_ms": 1000 * float(np.median(rater_pages)),
                           "cpu_mean_ms": 1000 * float(np.mean(rater_pages))}])
    return pd.concat([frame, total], ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--raters", type=int, default=100, help="concurrent simulated raters (default 100)")
    parser.add_argument("--workers", type=int, default=1, help="server processes (stableval serve --workers; "
                                                               "PostgreSQL or the SQLite file)")
    parser.add_argument("--client-processes", type=int, default=1,
                        help="processes the simulated raters are split over (default 1; with 2 the client's own "
                             "event-loop lag, which the latencies include, is shared out)")
    parser.add_argument("--items", type=int, default=4, help="questions each rater completes at most (default 4)")
    parser.add_argument("--seconds", type=float, default=120.0, help="stop starting new questions after this")
    parser.add_argument("--think", type=float, default=2.0,
                        help="mean pause before each page in seconds, uniform on [0, 2·think] (default 2, as people "
                             "read and click; 0 = a closed loop at saturation, a stress test)")
    parser.add_argument("--k", type=int, default=3, help="ratings needed per question (default 3)")
    parser.add_argument("--database-url", default=None,
                        help="an EMPTY database to use (default: a fresh SQLite file in a temporary folder)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", type=Path, default=None, help="keep the server's log in this file")
    parser.add_argument("--cpu", action="store_true",
                        help="instead of the load run: CPU ms per page measured in this process (no server, no "
                             "socket, one request at a time; independent of the machine's load), --raters raters "
                             "× --items questions on SQLite")
    args = parser.parse_args(argv)
    if args.cpu:
        with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
            print(cpu_in_process(args.raters, args.items, args.k).to_string(index=False))
        return 0
    folder = tempfile.TemporaryDirectory(prefix="bench-portal-")
    url = args.database_url or f"sqlite:///{Path(folder.name) / 'portal.db'}"
    questions = -(-args.raters * args.items // args.k) + args.raters  # enough for everyone, with a margin
    tokens, criteria = seed_database(url, args.raters + 1, questions + 1, args.k)
    log = args.log or Path(folder.name) / "server.log"
    process, base = start_server(url, 10 * (args.raters + 1), args.workers, log)
    print(f"portal on {base} (stableval serve, {args.workers} worker(s)), database {url.split('?')[0]}; "
          f"{args.raters} raters × up to {args.items} questions, {questions} questions, k = {args.k}, "
          f"think {args.think} s; {os.cpu_count()} CPUs")
    stats = Stats()
    try:
        # warm-up (not timed): one rater completes one question, so templates and code paths are loaded
        warm = Stats()
        asyncio.run(rater(new_client(base), tokens.pop(), criteria, warm, 1, time.monotonic() + 60, 0.0, -1))
        if warm.errors:
            raise RuntimeError(f"warm-up failed: {warm.errors}")
        stats.acknowledged.extend(warm.acknowledged)
        seeds = [args.seed * 100_003 + i for i in range(len(tokens))]
        parts = max(1, min(args.client_processes, len(tokens)))
        cpu_before = cpu_seconds(process.pid)
        start = time.perf_counter()
        deadline = time.monotonic() + args.seconds
        if parts == 1:
            merge(stats, run_raters(base, tokens, criteria, args.items, deadline, args.think, seeds))
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(parts, mp_context=multiprocessing.get_context("fork")) as pool:
                for part in pool.map(run_raters, [base] * parts, [tokens[i::parts] for i in range(parts)],
                                     [criteria] * parts, [args.items] * parts, [deadline] * parts,
                                     [args.think] * parts, [seeds[i::parts] for i in range(parts)]):
                    merge(stats, part)
        wall = time.perf_counter() - start
        cpu_after = cpu_seconds(process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        problems_logged = [line for line in log.read_text(errors="replace").splitlines()
                           if any(word in line for word in ("Traceback", " 500 ", "ERROR", "died", "hung"))]
        if problems_logged:
            print("server log:", "\n".join(problems_logged[-20:]), file=sys.stderr)
    table = report(stats, wall)
    n_requests = int(table["requests"].iloc[-1])
    print(f"\n{n_requests:,} requests and {len(stats.acknowledged):,} submissions in {wall:.1f} s: "
          f"{n_requests / wall:.1f} requests/s, {len(stats.acknowledged) / wall:.2f} submissions/s; "
          f"{stats.finished} of {args.raters} raters finished; {len(stats.errors)} error(s)")
    if cpu_before is not None and cpu_after is not None:
        print(f"server CPU: {cpu_after - cpu_before:.1f} s over the run, "
              f"{1000 * (cpu_after - cpu_before) / max(n_requests, 1):.1f} ms per request")
    with pd.option_context("display.width", 200, "display.float_format", "{:.1f}".format):
        print(table.to_string(index=False))
    for error in stats.errors[:10]:
        print("error:", error)
    problems = check_database(url, stats.acknowledged, args.k, len(criteria))
    print("database check:", "; ".join(problems) if problems else
          f"OK — all {len(stats.acknowledged)} acknowledged submissions stored (each with {len(criteria)} "
          f"judgments), none unacknowledged, no question over k = {args.k}")
    p99 = float(table["p99_ms"].iloc[-1])
    print(f"goal p99 < 100 ms over all pages: {'met' if p99 < 100 else 'MISSED'} (p99 {p99:.0f} ms)")
    folder.cleanup()
    return 1 if problems or stats.errors else 0


if __name__ == "__main__":
    sys.exit(main())
