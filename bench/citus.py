"""tscoll's benchmark on Citus: the TSBS data and queries of bench.py on a
coordinator and two workers, next to the same on one node.

Loads the readings by COPY into a tscoll collection and a plain typed table
on the single-node instance, and into the same two, distributed, on the
cluster (the collection with tscoll.distribute_collection, the typed table
by hostname); runs every query of bench.py on the four, checks that they
agree, and prints one table. On one machine the three nodes share its
cores: the figures show what the fan-out costs, not a speed-up.
See bench/README.md.
"""

import argparse
import os
import sys

import psycopg

import bench
import generate

TARGETS = ["1 node", "3 nodes"]
SYSTEMS = ["tscoll", "typed"]
SHARDS = 8


def create(conn, system, target):
    bench.create(conn, system)
    if target == "3 nodes":
        if system == "tscoll":
            conn.execute("SELECT tscoll.distribute_collection('cpu', %s)", [SHARDS])
        else:
            conn.execute("SELECT create_distributed_table('cpu_typed', 'hostname', "
                         "shard_count => %s)", [SHARDS])


def size(conn, system, target):
    function = "citus_total_relation_size" if target == "3 nodes" else "pg_total_relation_size"
    return conn.execute(f"SELECT {function}(%s)", [bench.storage(system)]).fetchone()[0]


def load(conn, system, target, directory, dsn):
    create(conn, system, target)

    def copy():
        with open(bench.data_file(system, directory), "rb") as f:
            bench.subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                                  bench.copy_command(system), dsn], stdin=f, check=True)
    result = bench.measure_ingest(conn, system, "", copy)
    result["bytes/measurement"] = size(conn, system, target) / result["rows"]
    conn.execute(f"VACUUM ANALYZE {bench.storage(system)}")
    return result


def connect(dsn):
    conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=None)
    conn.execute("SET TimeZone = 'UTC'")
    return conn


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--decimals", type=int, choices=[0, 2], default=2)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per query (median)")
    parser.add_argument("--no-natural", action="store_true",
                        help="the benchmark's query forms only")
    args = parser.parse_args()
    directory = os.path.join(bench.HERE, "data",
                             generate.directory_name(args.hosts, args.hours, args.decimals))
    print(f"generating data into {directory} (once)", file=sys.stderr)
    generate.generate(args.hosts, args.hours, directory, args.decimals)

    # The single node: a fresh database in the local instance (bench/run.sh).
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS tscoll_bench_citus")
        admin.execute("CREATE DATABASE tscoll_bench_citus")
    single = connect("dbname=tscoll_bench_citus")
    single.execute("CREATE EXTENSION tscoll")
    dsns = {"1 node": single.info.dsn, "3 nodes": os.environ["TSCOLL_CITUS_DSN"]}
    conns = {"1 node": single, "3 nodes": connect(dsns["3 nodes"])}
    header = bench.machine(single, argparse.Namespace(
        hosts=args.hosts, hours=args.hours, decimals=args.decimals, clients=0,
        single_rows=0, runs=args.runs))[:1] + [
        f"Citus {conns['3 nodes'].execute('SELECT citus_version()').fetchone()[0].split(' on ')[0]}"
        f": a coordinator and 2 workers on this machine, {SHARDS} shards per table; "
        f"{args.hosts} hosts x {args.hours} h"]

    # the table of hosts some natural forms join (a reference table on Citus)
    for t, conn in conns.items():
        conn.execute("DROP TABLE IF EXISTS bench_hosts")
        conn.execute("CREATE TABLE bench_hosts (id int PRIMARY KEY, hostname text)")
        conn.execute("INSERT INTO bench_hosts SELECT h, 'host_' || h FROM generate_series(0, %s) h",
                     [args.hosts - 1])
        if t == "3 nodes":
            conn.execute("SELECT create_reference_table('bench_hosts')")

    columns = [(s, t) for t in TARGETS for s in SYSTEMS]
    figures = []
    ingest = {}
    for s, t in columns:
        print(f"{s}, {t}: COPY", file=sys.stderr)
        ingest[(s, t)] = load(conns[t], s, t, directory, dsns[t])
    for key in ["rows/s", "bytes/measurement"]:
        figures.append((f"COPY: {key}", {c: ingest[c][key] for c in columns}))

    queries = list(bench.QUERIES)
    if not args.no_natural:
        queries += bench.NATURAL
    params = bench.parameters(args.hosts, args.hours)
    mismatches, failures = [], []
    for q in queries:
        print(f"query {q}", file=sys.stderr)
        latency, results = {}, {}
        for s, t in columns:
            try:
                latency[(s, t)], _, results[(s, t)] = bench.run_query(
                    conns[t], bench.query_text(s, q, params[bench.question(q)]), args.runs)
            except psycopg.Error as e:
                failures.append(f"{q} on {s}, {t}: {str(e).splitlines()[0]}")
        if not results:
            continue
        results, _ = bench.comparable(results)
        reference = next(iter(results.values()))
        mismatches += [f"{q}: {s}, {t} differs" for (s, t), r in results.items() if r != reference]
        figures.append((f"{q} ms", latency))

    names = ["figure"] + [f"{s} ({t})" for s, t in columns] + \
            [f"tscoll/typed ({t})" for t in TARGETS] + ["tscoll 3 nodes/1 node"]
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for name, values in figures:
        cells = [name] + [bench.fmt(values.get(c)) for c in columns]
        for t in TARGETS:
            a, b = values.get(("tscoll", t)), values.get(("typed", t))
            cells.append(f"{a / b:.2f}" if a is not None and b else "")
        a, b = values.get(("tscoll", "3 nodes")), values.get(("tscoll", "1 node"))
        cells.append(f"{a / b:.2f}" if a is not None and b else "")
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(header))
    print()
    print("\n".join(lines))
    print()
    print("rows/s: higher is better; bytes and ms: lower is better.")
    if failures:
        print("\nNot run:\n" + "\n".join(failures))
    if mismatches:
        print("\n!!! RESULTS DIFFER !!!\n" + "\n".join(mismatches))
        sys.exit(1)
    print("Every query that ran returned the same rows everywhere.")


if __name__ == "__main__":
    main()
