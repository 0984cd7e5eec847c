"""LLM stage throughput against the loopback OpenAI-compatible server with 50 ms latency (``--latency``).

Three clients run alternately, each concurrency level once per client per round, so all see the
same machine (the server in its own process shares its cores):

* ``ceiling``: a bare aiohttp client in this process, a loop of ``ClientSession.post`` and ``json()``
  over one connector of ``limit=concurrency``: what the machine allows, with no retries, cache or rows;
* ``aiohttp``: equilens' runner, ``llm.http_client: aiohttp`` (the default);
* ``httpx``: equilens' runner, ``llm.http_client: httpx`` (small httpx pools).

For each: calls/s, its ratio of the ideal (concurrency / latency) and of the ceiling, the client's
CPU time per call (all client processes counted, their start included) and the server's. Run:

    .venv/bin/python tests/benchmarks/bench_llm_stage.py [--calls 2000] [--rounds 1] [--processes 0]
        [--latency 0.05] [--levels 8 32 128] [--clients ceiling aiohttp httpx]

A slow endpoint (``--latency 2 --calls 320 --levels 32 --clients ceiling aiohttp``) shows what the
stage costs while it waits: the ceiling pays for its calls only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 0.05
CLIENTS = ("ceiling", "aiohttp", "httpx")


async def bare_aiohttp(base_url: str, concurrency: int, bodies: list[dict]) -> None:
    """The ceiling: ``concurrency`` loops posting the bodies over one aiohttp connector, reading each JSON."""
    import aiohttp

    todo = iter(bodies)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def loop() -> None:
            for body in todo:
                async with session.post(f"{base_url}/chat/completions", json=body) as reply:
                    reply.raise_for_status()
                    await reply.json()

        await asyncio.gather(*(loop() for _ in range(concurrency)))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the client processes), not the server's."""
    own = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + kids.ru_utime + kids.ru_stime


def proc_cpu_seconds(pid: int) -> float:
    """CPU time of another process (the server) from /proc; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(client: str, concurrency: int, calls: int, base_url: str, processes: int, tag: int,
            server_pid: int = 0) -> tuple:
    """(calls/s, seconds, client CPU ms per call, client processes, server CPU ms per call) of one cell."""
    system = f"bench {client} {concurrency} {tag}"  # a new system prompt per cell: nothing cached
    cfg = LLMConfig(provider="openai", model="bench", base_url=base_url, max_concurrency=concurrency,
                    max_retries=0, timeout=30, system_prompt=system, client_processes=processes,
                    http_client="httpx" if client == "httpx" else "aiohttp")
    wall0, cpu0, srv0 = time.perf_counter(), cpu_seconds(), proc_cpu_seconds(server_pid)
    if client == "ceiling":
        bodies = [{"model": "bench", "temperature": 1.0, "max_completion_tokens": 64, "max_tokens": 64,
                   "messages": [{"role": "system", "content": system}, {"role": "user", "content": f"prompt {i}"}]}
                  for i in range(calls)]
        asyncio.run(bare_aiohttp(base_url, concurrency, bodies))
        nproc = 1
    else:
        reqs = [LLMRequest(f"prompt {i}", 0, cache_key(cfg, f"prompt {i}", 0)) for i in range(calls)]
        results = run_requests(reqs, cfg, store=None)
        failed = [r for r in results if not r.ok]
        if failed:
            raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0].error_class}: {failed[0].error_message}")
        from equilens.tasks.llm.runner import client_processes

        nproc = client_processes(cfg, calls)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    srv = proc_cpu_seconds(server_pid) - srv0
    return calls / wall, wall, 1000 * cpu / calls, nproc, 1000 * srv / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per cell")
    parser.add_argument("--rounds", type=int, default=1, help="rounds; ratios are medians over them")
    parser.add_argument("--processes", type=int, default=0, help="llm.client_processes for equilens (0 = auto)")
    parser.add_argument("--levels", type=int, nargs="*", default=[8, 32, 128], help="concurrency levels")
    parser.add_argument("--latency", type=float, default=LATENCY, help="the server's seconds per answer")
    parser.add_argument("--clients", nargs="*", default=list(CLIENTS), choices=CLIENTS,
                        help="clients to run (the ceiling always runs)")
    args = parser.parse_args()
    clients = ["ceiling", *(c for c in args.clients if c != "ceiling")]
    # The server runs in its own process so it does not compete with the client for the GIL.
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(args.latency)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    print(f"{len(os.sched_getaffinity(0))} CPU cores usable, load average {os.getloadavg()[0]:.1f}; {args.calls} calls per "
          f"cell, {args.latency:g} s latency")
    print(f"{'client':>8} {'conc':>5} {'procs':>5} {'seconds':>8} {'calls/s':>8} {'ideal':>6} {'of ideal':>8} "
          f"{'of ceiling':>10} {'cpu ms/call':>11} {'server ms':>10}")
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    try:
        for client in clients:  # warm-up: imports and first connections are not timed
            measure(client, 4, 20, base_url, 1, -1)
        rows: dict[tuple, list] = {}
        for rnd in range(args.rounds):
            for concurrency in args.levels:
                for client in clients:
                    rate, wall, cpu, nproc, srv = measure(client, concurrency, args.calls, base_url, args.processes,
                                                          rnd, server.pid)
                    rows.setdefault((client, concurrency), []).append((rate, cpu))
                    ceiling = rows[("ceiling", concurrency)][-1][0]
                    ideal = concurrency / args.latency
                    print(f"{client:>8} {concurrency:>5} {nproc:>5} {wall:>8.2f} {rate:>8.1f} {ideal:>6.0f} "
                          f"{rate / ideal:>8.2f} {rate / ceiling:>10.2f} {cpu:>11.2f} {srv:>10.2f}", flush=True)
        print("\nequilens as a share of the bare aiohttp client (median over rounds); client CPU per call, and "
              "its excess over the ceiling's")
        for concurrency in args.levels:
            top = med([x[0] for x in rows[("ceiling", concurrency)]])
            base_cpu = med([x[1] for x in rows[("ceiling", concurrency)]])
            parts = []
            for client in clients[1:]:
                cpu = med([x[1] for x in rows[(client, concurrency)]])
                parts.append(f"{client} {med([x[0] for x in rows[(client, concurrency)]]) / top:4.2f} "
                             f"({cpu:.2f} ms, {cpu - base_cpu:+.2f})")
            print(f"  concurrency {concurrency:>4}: ceiling {top:6.0f} calls/s ({base_cpu:.2f} ms); " + "; ".join(parts))
    finally:
        server.kill()


if __name__ == "__main__":
    main()
