"""Scale benchmark: the whole counterfactual run at N prompts, its peak memory and its time per stage.

For each size N this script

1. writes N distinct synthetic prompts (templates x subjects x occupations x cities x topics) to a
   CSV: a third mention only gender (3 variants: male, female, neutral), a third only race (6
   variants), a third both (9), so a prompt costs ~6 LLM calls, ~600,000 at 100,000 prompts;
2. starts the loopback OpenAI-compatible fake server (``tests/fakes/openai_server.py``) with zero
   latency in its own process, as ``bench_llm_stage.py`` does, so its CPU is its own;
3. runs ``equilens run CONFIG`` in a fresh subprocess (``_scale_worker.py``: the CLI's code path,
   the counterfactual flow under Prefect): attributes gender + race, ``llm.count`` 1, provider
   ``openai`` at the fake server's URL, ``max_concurrency`` 32, a new DuckDB file, validation on,
   no HTML report;
4. polls the resident memory (RSS) of the run's whole process tree (the run, Prefect's API server,
   the LLM client processes) every 0.2 s, and reads the kernel's peak RSS of the largest single
   process (``wait4``); the worker logs when each stage starts and ends, so the peak is also shown
   per stage;
5. reads the flow's own stage timings from the ``runs`` table (``RunRecorder``), the counts from
   ``responses``, and the bytes Prefect persisted as task results (``PREFECT_LOCAL_STORAGE_PATH``
   points at the run's temp folder).

It prints one row per size (prompts, prompts kept, calls, wall seconds, seconds per 1,000 prompts,
peak RSS of the tree and of the largest process, calls/s of the LLM stage, Prefect's persisted result
bytes, seconds per stage), then the cost per prompt of the largest size over the reference size
(at most 1.3x from 10,000 to 100,000 is the aim) and whether the peak stayed under 2,500 MB, the
memory a 100,000-prompt run on this 2-core machine is held to.

Scoring and metrics: VADER sentiment (strict and weak parity, with bootstrap intervals and
permutation tests), BLEU and ROUGE-L on neutralised texts, non-completion rate. The embedding
metric (cosine similarity) is off by default, and since the score stage encodes only when a metric
reads embeddings, the run then loads no sentence encoder at all. ``--cosine`` adds it: MiniLM then
encodes every distinct answer (~6 per prompt), ~600,000 at 100k, hours on two cores.

Run (each size in its own process; the default sizes take a few minutes):

    nice -n 10 .venv/bin/python tests/benchmarks/bench_scale.py                       # 1,000 and 10,000
    nice -n 10 .venv/bin/python tests/benchmarks/bench_scale.py --sizes 10000 100000   # the issue's run
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("_scale_worker.py")
RSS_LIMIT_MB = 2500
STAGES = ("load_prompts", "ftu", "expand", "llm", "score", "metrics")
METRICS = ["strict_sentiment_parity", "weak_sentiment_parity", "bleu_similarity", "rougel_similarity",
           "non_completion_rate"]

# --- synthetic prompts -------------------------------------------------------------------------
SUBJECTS = [  # (subject, pronoun, object pronoun): gender words
    ("my son", "he", "him"), ("my daughter", "she", "her"), ("my brother", "he", "him"),
    ("my sister", "she", "her"), ("my husband", "he", "him"), ("my wife", "she", "her"),
    ("my father", "he", "him"), ("my mother", "she", "her"), ("my nephew", "he", "him"),
    ("my niece", "she", "her"),
]
GENDER_NOUNS = ["man", "woman"]
RACES = ["Black", "white", "Asian", "Hispanic", "Native American", "Middle Eastern"]
OCCUPATIONS = [
    "nurse", "engineer", "teacher", "accountant", "doctor", "lawyer", "programmer", "electrician",
    "plumber", "chef", "pharmacist", "architect", "journalist", "librarian", "mechanic", "firefighter",
    "pilot", "dentist", "cashier", "carpenter", "scientist", "designer", "manager", "banker", "farmer",
    "painter", "musician", "writer", "translator", "consultant", "analyst", "surgeon", "paramedic",
    "baker", "barber", "tailor", "bus driver", "researcher", "social worker", "data analyst",
]
CITIES = [
    "Cleveland", "Ohio", "Chicago", "Boston", "Seattle", "Phoenix", "Miami", "Atlanta", "Baltimore", "Pittsburgh",
    "Portland", "Detroit", "Memphis", "Sacramento", "Tampa", "Milwaukee", "Omaha", "Tucson", "Fresno", "Albany",
    "Toledo", "Reno", "Boise", "Spokane", "Louisville", "Richmond", "Nashville", "Newark", "Buffalo", "Oakland",
]
TOPICS = [
    "salary negotiation", "public speaking", "time management", "night shifts", "job interviews",
    "retirement savings", "a career change", "learning statistics", "writing reports", "leading a team",
    "asking for feedback", "work-life balance", "getting a mortgage", "starting a side business",
    "dealing with a difficult boss", "going back to school", "networking events", "remote work",
    "a first marathon", "learning Spanish", "buying a used car", "a job offer abroad", "burnout",
    "mentoring juniors", "a performance review", "paying off student loans", "moving to a new city",
    "a certification exam", "managing stress", "a promotion",
]
GENDER_ONLY = [
    "{Subj} works as a {occ} in {city}. What should {pron} learn next about {topic}?",
    "Write a short reference letter for {subj}, a {occ} from {city} with {n} years of experience.",
    "{Subj} wants to move to {city} to work as a {occ}. Give {obj} {n} tips on {topic}.",
    "Describe a typical day for {subj}, who is a {occ} in {city}, in {n} sentences, mentioning {topic}.",
]
RACE_ONLY = [
    "{A} {race} {occ} in {city} asked how to get better at {topic}. What would you tell them?",
    "Write a short reference letter for {a} {race} {occ} from {city} with {n} years of experience.",
    "Should {a} {race} {occ} in {city} ask for a raise after {n} years? Think about {topic}.",
    "Give {a} {race} student in {city} {n} tips on {topic} for becoming a {occ}.",
]
BOTH = [
    "{Subj} is {a} {race} {occ} in {city}. How can {pron} get better at {topic}?",
    "Write a {n}-line reference for {subj}, {a} {race} {occ} from {city}, who is good at {topic}.",
    "{Subj}, {a} {race} {occ} with {n} years in {city}, wants advice on {topic}. What should {pron} do?",
    "{A} {race} {gnoun} who works as a {occ} in {city} asks about {topic}. Answer in {n} sentences.",
]


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def make_prompts(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct prompts, a third of each kind (gender only, race only, both), shuffled."""
    rng = random.Random(seed)
    kinds = [GENDER_ONLY, RACE_ONLY, BOTH]
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        templates = kinds[len(out) % 3]
        subj, pron, obj = rng.choice(SUBJECTS)
        race = rng.choice(RACES)
        slots = dict(subj=subj, Subj=subj[0].upper() + subj[1:], pron=pron, obj=obj, race=race,
                     a=_article(race), A=_article(race).capitalize(), occ=rng.choice(OCCUPATIONS),
                     city=rng.choice(CITIES), topic=rng.choice(TOPICS), n=rng.randint(2, 9),
                     gnoun=rng.choice(GENDER_NOUNS))
        text = rng.choice(templates).format(**slots)
        if text not in seen:
            seen.add(text)
            out.append(text)
    rng.shuffle(out)
    return out


def write_prompts(path: Path, prompts: list[str]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["prompt"])
        writer.writerows([p] for p in prompts)


def write_config(path: Path, prompts: Path, db: Path, base_url: str, args: argparse.Namespace) -> None:
    config = {
        "name": "bench-scale",
        "prompts": {"path": str(prompts), "column": "prompt"},
        "counterfactual": {"attributes": ["gender", "race"], "include_neutral_gender": True},
        "llm": {"provider": "openai", "model": "bench", "base_url": base_url, "count": 1,
                "max_concurrency": args.concurrency, "client_processes": args.processes, "max_tokens": 64,
                "max_retries": 2, "timeout": 60},
        "metrics": {"names": METRICS + (["cosine_similarity"] if args.cosine else []),
                    "bootstrap_resamples": args.bootstrap, "permutations": args.permutations},
        "storage": {"duckdb_path": str(db), "reports_dir": None},
        "validation": {"enabled": not args.no_validation},
    }
    path.write_text(json.dumps(config, indent=2))  # JSON is YAML


# --- measurement -------------------------------------------------------------------------------
class TreeMemory:
    """Polls the summed RSS of a process and its descendants; keeps the peak and what made it up."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.interval = interval
        self.peak = 0
        self.peak_root = 0
        self.peak_parts: list[tuple[str, int]] = []
        self.max_procs = 0
        self.samples: list[tuple[float, int, int]] = []  # (wall clock, tree RSS, run process RSS)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            parts = []
            for p in procs:
                try:
                    parts.append((_label(p), p.memory_info().rss))
                except psutil.Error:
                    continue
            total = sum(r for _, r in parts)
            self.samples.append((time.time(), total, parts[0][1] if parts and parts[0][0] == "run" else 0))
            self.max_procs = max(self.max_procs, len(parts))
            if parts and parts[0][0] == "run":
                self.peak_root = max(self.peak_root, parts[0][1])
            if total > self.peak:
                self.peak, self.peak_parts = total, parts
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


def _label(p) -> str:  # psutil.Process
    try:
        cmd = " ".join(p.cmdline())
    except Exception:  # noqa: BLE001
        return "?"
    if "_scale_worker" in cmd and "multiprocessing" not in cmd:
        return "run"
    if "multiprocessing" in cmd or "spawn_main" in cmd:
        return "llm-client"
    if "prefect" in cmd or "uvicorn" in cmd:
        return "prefect-api"
    return cmd.split()[0].rsplit("/", 1)[-1] if cmd else "?"


def stage_peaks(samples: list[tuple[float, int, int]], log: Path) -> dict[str, tuple[float, float]]:
    """Peak RSS (MB) of the tree and of the run process while each stage ran, from the worker's ``stage enter|exit time`` lines;
    "start" is everything before the first stage (imports, Prefect's API), "end" after the last."""
    spans = stage_spans(log)
    out: dict[str, tuple[float, float]] = {}
    first = min((a for a, _ in spans.values()), default=float("inf"))
    last = max((b for _, b in spans.values()), default=0.0)
    for t, rss, run in samples:
        names = [n for n, (a, b) in spans.items() if a <= t <= b] or (["start"] if t < first else ["end"] if t > last else [])
        for n in names:
            old = out.get(n, (0.0, 0.0))
            out[n] = (max(old[0], rss / 2**20), max(old[1], run / 2**20))
    return out


def stage_spans(log: Path) -> dict[str, list[float]]:
    """Each stage's [enter, exit] wall-clock times from the worker's ``stage enter|exit time`` lines."""
    spans: dict[str, list[float]] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            name, what, t = line.split()
            spans.setdefault(name, [0.0, 0.0])[0 if what == "enter" else 1] = float(t)
    return spans


def stage_entry_rss(samples: list[tuple[float, int, int]], log: Path) -> dict[str, float]:
    """RSS (MB) of the run process at the first poll after each stage began: what the stages before
    it left resident, which its own work adds to."""
    out: dict[str, float] = {}
    for name, (enter, _) in stage_spans(log).items():
        after = next((run for ts, _, run in samples if ts >= enter), None)
        if after is not None:
            out[name] = after / 2**20
    return out


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def run_size(n: int, args: argparse.Namespace) -> dict:
    import psutil

    work = Path(tempfile.mkdtemp(prefix=f"equilens-scale-{n}-", dir=args.tmp))
    try:
        t0 = time.perf_counter()
        prompts = make_prompts(n, args.seed)
        write_prompts(work / "prompts.csv", prompts)
        del prompts
        gen_s = time.perf_counter() - t0
        server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", "0"],
                                  cwd=ROOT, stdout=subprocess.PIPE, text=True)
        try:
            base_url = server.stdout.readline().strip()
            db = work / "bench.duckdb"
            write_config(work / "config.yaml", work / "prompts.csv", db, base_url, args)
            env = {**os.environ, "OPENAI_API_KEY": "sk-bench-not-a-secret", "HF_HUB_OFFLINE": "1",
                   "PREFECT_LOCAL_STORAGE_PATH": str(work / "prefect-results"),
                   "EQUILENS_BENCH_STAGE_LOG": str(work / "stages.log")}
            log = (work / "run.log").open("w")
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, str(WORKER), str(work / "config.yaml")], cwd=work,
                                    stdout=log, stderr=subprocess.STDOUT, env=env)
            mem = TreeMemory(proc.pid)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            mem.stop()
            log.close()
            server_cpu = sum(psutil.Process(server.pid).cpu_times()[:2])
        finally:
            server.kill()
            server.wait()
        if proc.returncode != 0:
            tail = (work / "run.log").read_text()[-3000:]
            raise SystemExit(f"size {n}: the run exited {proc.returncode} (kept {work}):\n{tail}")
        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        timings_json, summary_json = con.execute("SELECT timings, summary FROM runs").fetchone()
        # answers: one row per variant; calls: distinct requests (variants with the same text share one)
        answers, calls, kept = con.execute(
            "SELECT count(*), count(DISTINCT cache_key), count(DISTINCT prompt_id) FROM responses").fetchone()
        failed = con.execute("SELECT count(*) FROM responses WHERE NOT ok").fetchone()[0]
        con.close()
        timings = json.loads(timings_json)
        row = {
            "size": n, "kept": kept, "answers": answers, "calls": calls, "failed": failed, "wall": wall,
            "stages": {k: float(timings.get(k, 0.0)) for k in STAGES},
            "peak_tree_mb": mem.peak / 2**20, "peak_run_mb": mem.peak_root / 2**20,
            "maxrss_mb": usage.ru_maxrss / 1024, "max_procs": mem.max_procs,
            "peak_parts": [(lbl, round(r / 2**20)) for lbl, r in mem.peak_parts],
            "prefect_mb": _dir_bytes(work / "prefect-results") / 2**20,
            "duckdb_mb": db.stat().st_size / 2**20, "server_cpu": server_cpu, "gen_s": gen_s,
            "load_avg": os.getloadavg()[1],  # 5-minute load average as the run ended
            "summary": json.loads(summary_json), "stage_peak_mb": stage_peaks(mem.samples, work / "stages.log"),
            "stage_entry_mb": stage_entry_rss(mem.samples, work / "stages.log"),
        }
        row["stage_sum"] = sum(row["stages"].values())
        return row
    finally:
        if args.keep:
            print(f"  kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def print_table(rows: list[dict]) -> None:
    head = (f"{'prompts':>8} {'kept':>8} {'calls':>8} {'wall s':>8} {'s/1k':>6} {'stage s/1k':>10} "
            f"{'peak MB':>8} {'run MB':>7} {'maxrss':>7} {'calls/s':>8} {'prefect MB':>10} "
            + " ".join(f"{s:>8}" for s in STAGES))
    print(head)
    for r in rows:
        llm = r["stages"]["llm"]
        print(f"{r['size']:>8} {r['kept']:>8} {r['calls']:>8} {r['wall']:>8.1f} {1000 * r['wall'] / r['size']:>6.2f} "
              f"{1000 * r['stage_sum'] / r['size']:>10.2f} {r['peak_tree_mb']:>8.0f} {r['peak_run_mb']:>7.0f} "
              f"{r['maxrss_mb']:>7.0f} {r['calls'] / llm if llm else 0:>8.0f} {r['prefect_mb']:>10.1f} "
              + " ".join(f"{r['stages'][s]:>8.1f}" for s in STAGES))
    print("\npeak RSS while each stage ran, MB: whole tree / run process alone (-: shorter than one 0.2 s poll)")
    cols = ("start", *STAGES, "end")
    print(f"{'prompts':>8} " + " ".join(f"{c:>12}" for c in cols))
    for r in rows:
        peaks = r["stage_peak_mb"]
        print(f"{r['size']:>8} " + " ".join(f"{'%.0f / %.0f' % peaks[c] if c in peaks else '-':>12}" for c in cols))
    print("\nRSS of the run process as each stage began, MB (what earlier stages left resident)")
    print(f"{'prompts':>8} " + " ".join(f"{c:>12}" for c in STAGES))
    for r in rows:
        entry = r.get("stage_entry_mb", {})
        print(f"{r['size']:>8} " + " ".join(f"{'%.0f' % entry[c] if c in entry else '-':>12}" for c in STAGES))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000],
                        help="prompt counts, each run in a fresh process (default: 1000 10000; the issue: 10000 100000)")
    parser.add_argument("--reference", type=int, default=None,
                        help="size the largest is compared with (default: 10000 if run, else the smallest)")
    parser.add_argument("--concurrency", type=int, default=32, help="llm.max_concurrency (default 32)")
    parser.add_argument("--processes", type=int, default=0, help="llm.client_processes (default 0: auto by size)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="metrics.bootstrap_resamples (default 1000)")
    parser.add_argument("--permutations", type=int, default=1000, help="metrics.permutations (default 1000)")
    parser.add_argument("--cosine", action="store_true",
                        help="also compute cosine similarity (MiniLM encodes every answer: slow on 2 cores)")
    parser.add_argument("--no-validation", action="store_true", help="switch the great-expectations suites off")
    parser.add_argument("--seed", type=int, default=0, help="prompt generator seed")
    parser.add_argument("--tmp", default=None, help="folder for the temp files (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep each size's temp folder (prompts, DuckDB, log)")
    parser.add_argument("--json", default=None, help="also write the rows as JSON to this file")
    args = parser.parse_args()

    sizes = sorted(set(args.sizes))
    print(f"{len(os.sched_getaffinity(0))} usable cores, load average {os.getloadavg()[0]:.1f}; "
          f"gender + race, count 1, concurrency {args.concurrency}, zero-latency loopback server; "
          f"metrics {', '.join(METRICS)} (bootstrap {args.bootstrap}, permutations {args.permutations}); "
          f"{'cosine similarity with MiniLM' if args.cosine else 'no embedding metric, so no encoder'}", flush=True)
    rows = []
    for n in sizes:
        print(f"size {n}: running ...", flush=True)
        row = run_size(n, args)
        rows.append(row)
        print(f"size {n}: {row['wall']:.1f} s, peak {row['peak_tree_mb']:.0f} MB; at the peak: "
              + ", ".join(f"{lbl} {mb} MB" for lbl, mb in row["peak_parts"])
              + f"; server CPU {row['server_cpu']:.1f} s; DuckDB {row['duckdb_mb']:.0f} MB; "
              f"{row['failed']} failed calls; 5-min load average at the end {row['load_avg']:.1f}", flush=True)
    print()
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str))
    largest = rows[-1]
    ref_size = args.reference or (10000 if 10000 in sizes and sizes[-1] != 10000 else sizes[0])
    ref = next((r for r in rows if r["size"] == ref_size), rows[0])
    if ref is not largest:
        wall_ratio = (largest["wall"] / largest["size"]) / (ref["wall"] / ref["size"])
        stage_ratio = (largest["stage_sum"] / largest["size"]) / (ref["stage_sum"] / ref["size"])
        print(f"\ncost per prompt, {largest['size']} over {ref['size']}: {wall_ratio:.2f}x wall, "
              f"{stage_ratio:.2f}x stage time (target <= 1.3x): {'ok' if max(wall_ratio, stage_ratio) <= 1.3 else 'MISSED'}")
    if largest["size"] < 100_000:
        print(f"a 100,000-prompt run at the cost per prompt of {largest['size']}: about "
              f"{largest['wall'] / largest['size'] * 100_000 / 60:.0f} min (linear; the metric stage grows a little faster)")
    peak = max(r["peak_tree_mb"] for r in rows)
    print(f"peak RSS of the run's process tree {peak:.0f} MB: {'under' if peak < RSS_LIMIT_MB else 'OVER'} "
          f"{RSS_LIMIT_MB} MB")


if __name__ == "__main__":
    main()
