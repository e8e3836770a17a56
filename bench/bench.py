"""tscoll's benchmark: TSBS devops cpu-only against plain PostgreSQL tables.

Loads the same generated readings into tscoll, a plain jsonb table and a
plain typed table in one PostgreSQL instance, three ways (COPY, INSERT of
1,000 rows per statement, single-row INSERT from 8 pgbench clients), then
runs the TSBS cpu-only queries on each, checks that they agree, and prints
one table with every figure next to its ratio against each plain table.
See bench/README.md.
"""

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg
import psycopg.types.json

import generate

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEMS = ["tscoll", "jsonb", "typed"]
PLAIN = ["jsonb", "typed"]
QUERIES = ["single-groupby-1-1-1", "single-groupby-1-1-12", "single-groupby-5-1-12",
           "double-groupby-1", "double-groupby-all", "high-cpu-1", "high-cpu-all",
           "lastpoint", "groupby-orderby-limit", "cpu-max-all-1"]
# The same questions in the forms users write (bench/README.md): files
# queries/<system>-natural/<question>.<form>.sql.
NATURAL = sorted(f[:-4] for f in os.listdir(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "queries", "tscoll-natural")) if f.endswith(".sql"))
DATABASE = "tscoll_bench"
METRICS = generate.METRICS
TAGS = generate.TAGS


# -- the systems --------------------------------------------------------------

def table(system, suffix=""):
    return {"tscoll": "cpu", "jsonb": "cpu_jsonb", "typed": "cpu_typed"}[system] + suffix


def create(conn, system, suffix=""):
    name = table(system, suffix)
    if system == "tscoll":
        conn.execute("SELECT tscoll.create_collection(%s, 'time', 'tags', 'seconds')", [name])
        # The index the plain tables have, as MongoDB would declare it.
        conn.execute("SELECT tscoll.create_index(%s, '{\"tags.hostname\": 1, \"time\": 1}')",
                     [name])
    elif system == "jsonb":
        conn.execute(f"CREATE TABLE {name} (time timestamptz NOT NULL, tags jsonb NOT NULL, "
                     f"doc jsonb NOT NULL)")
        conn.execute(f"CREATE INDEX ON {name} ((tags->>'hostname'), time)")
    else:
        columns = ", ".join([f"{t} text" for t in TAGS] + [f"{m} float8" for m in METRICS])
        conn.execute(f"CREATE TABLE {name} (time timestamptz NOT NULL, {columns})")
        conn.execute(f"CREATE INDEX ON {name} (hostname, time)")


def drop(conn, system, suffix):
    if system == "tscoll":
        conn.execute("SELECT tscoll.drop_collection(%s)", [table(system, suffix)])
    else:
        conn.execute(f"DROP TABLE {table(system, suffix)}")


def storage(system, suffix=""):
    """The relation holding the data (the bucket table for tscoll)."""
    name = table(system, suffix)
    return f'"system.buckets.{name}"' if system == "tscoll" else name


def data_file(system, directory):
    return os.path.join(directory, {"tscoll": "cpu.ndjson", "jsonb": "cpu_jsonb.tsv",
                                    "typed": "cpu_typed.csv"}[system])


def copy_command(system, suffix=""):
    name = table(system, suffix)
    return {"tscoll": f"COPY {name} (doc) FROM STDIN",
            "jsonb": f"COPY {name} (time, tags, doc) FROM STDIN",
            "typed": f"COPY {name} FROM STDIN (FORMAT csv)"}[system]


def insert_statements(system, path, suffix, rows_per_statement=1000, limit=None):
    """The data file (its first `limit` rows) as multi-row INSERT
    statements (built before timing)."""
    name = table(system, suffix)
    head = {"tscoll": f"INSERT INTO {name} (doc) VALUES ",
            "jsonb": f"INSERT INTO {name} (time, tags, doc) VALUES ",
            "typed": f"INSERT INTO {name} VALUES "}[system]

    def row(line):
        fields = line.rstrip("\n").split("\t" if system == "jsonb" else "\x00")
        if system == "typed":
            values = line.rstrip("\n").split(",")
            return "(" + ",".join(f"'{v}'" for v in values[:11]) + "," + ",".join(values[11:]) + ")"
        return "(" + ",".join(f"'{f}'" for f in fields) + ")"

    statements, rows = [], []
    with open(path) as f:
        for n, line in enumerate(f):
            if limit is not None and n == limit:
                break
            rows.append(row(line))
            if len(rows) == rows_per_statement:
                statements.append(head + ",".join(rows))
                rows = []
    if rows:
        statements.append(head + ",".join(rows))
    return statements


def single_row_script(system, hosts, suffix):
    """A pgbench script inserting one reading of a random host."""
    name = table(system, suffix)
    lines = ["\\set h random(0, %d)" % (hosts - 1)]
    lines += ["\\set v%d random(0, 10000)" % i for i in range(len(METRICS))]
    when = "timestamptz '2016-02-01 00:00:00+00' + nextval('reading') * interval '10 ms'"
    values = [f":v{i} / 100.0" for i in range(len(METRICS))]
    if system == "typed":
        select = f"{when}, {', '.join('h.' + t for t in TAGS)}, {', '.join(values)}"
        lines.append(f"INSERT INTO {name} SELECT {select} FROM bench_hosts h WHERE h.id = :h;")
    else:
        doc = ", ".join(f"'{m}', {v}" for m, v in zip(METRICS, values))
        lines.append(f"INSERT INTO {name} (time, tags, doc) SELECT {when}, h.tags, "
                     f"jsonb_build_object({doc}) FROM bench_hosts h WHERE h.id = :h;")
    return "\n".join(lines) + "\n"


# -- measuring ----------------------------------------------------------------

def wal_lsn(conn):
    return conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]


def wal_since(conn, lsn):
    return conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [lsn]).fetchone()[0]


def total_bytes(conn, system, suffix=""):
    return conn.execute(f"SELECT pg_total_relation_size('{storage(system, suffix)}')").fetchone()[0]


def count_rows(conn, system, suffix=""):
    return conn.execute(f"SELECT count(*) FROM {table(system, suffix)}").fetchone()[0]


def proc_stat(pid):
    """The fields of /proc/<pid>/stat after the command name."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def server_cpu_seconds(postmaster):
    """CPU time of the server's processes so far: the postmaster's children
    alive now (utime + stime) and those it has reaped (cutime + cstime).
    On a shared machine the wall clock moves with the neighbours' load; the
    CPU a load costs the server moves much less."""
    tick = os.sysconf("SC_CLK_TCK")
    fields = proc_stat(postmaster)
    total = int(fields[13]) + int(fields[14])
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = proc_stat(entry)
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def postmaster_pid(conn):
    """The server's postmaster when it runs on this machine, else None."""
    try:
        return int(proc_stat(conn.execute("SELECT pg_backend_pid()").fetchone()[0])[1])
    except OSError:
        return None


def measure_ingest(conn, system, suffix, load):
    """Runs load(); returns rows/s, the server's CPU, bytes and WAL bytes
    per measurement."""
    conn.execute("CHECKPOINT")
    postmaster = postmaster_pid(conn)
    lsn = wal_lsn(conn)
    cpu = server_cpu_seconds(postmaster) if postmaster else None
    started = time.perf_counter()
    load()
    seconds = time.perf_counter() - started
    if cpu is not None:
        cpu = server_cpu_seconds(postmaster) - cpu
    wal = wal_since(conn, lsn)
    rows = count_rows(conn, system, suffix)
    size = total_bytes(conn, system, suffix)
    result = {"rows": rows, "seconds": seconds, "rows/s": rows / seconds, "bytes": size,
              "bytes/measurement": size / rows, "WAL bytes/measurement": float(wal) / rows}
    if cpu is not None:
        result["server CPU us/measurement"] = cpu * 1e6 / rows
    return result


def private_kib(pid):
    """The backend's private memory (anonymous pages, not shared buffers)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def ingest_copy(conn, system, directory, dsn):
    """COPY through psql: psycopg's COPY spins while the server is busy,
    which on a small machine takes CPU from the server it measures."""
    peak = [0]
    done = threading.Event()

    def sample():
        with psycopg.connect(dsn, autocommit=True) as watcher:
            pid = None
            while pid is None and not done.wait(0.01):
                row = watcher.execute("SELECT pid FROM pg_stat_activity WHERE query LIKE 'COPY %' "
                                      "AND pid <> pg_backend_pid()").fetchone()
                pid = row[0] if row else None
            while pid is not None and not done.wait(0.05):
                peak[0] = max(peak[0], private_kib(pid))

    def load():
        with open(data_file(system, directory), "rb") as f:
            subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                            copy_command(system), dsn], stdin=f, check=True)
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = measure_ingest(conn, system, "", load)
    finally:
        done.set()
        sampler.join()
    result["peak private MiB"] = peak[0] / 1024
    return result


def storage_split(conn, rows):
    """Where tscoll's bytes per measurement go after the COPY: each part of
    the bucket rows as stored (pg_column_size: compressed, TOASTed or not),
    what the heap and TOAST add around them, and the indexes."""
    buckets = storage("tscoll")
    parts = conn.execute(
        f"SELECT sum(pg_column_size(data)), sum(pg_column_size(control)), "
        f"sum(coalesce(pg_column_size(meta), 0) + pg_column_size(_id) "
        f"    + pg_column_size(min_time) + pg_column_size(max_time)), "
        f"pg_table_size('{buckets}'), pg_indexes_size('{buckets}') FROM {buckets}").fetchone()
    data, control, other, table_bytes, indexes = (float(v) for v in parts)
    return {"data": data / rows, "control": control / rows,
            "meta, _id and times": other / rows,
            "heap and TOAST overhead": (table_bytes - data - control - other) / rows,
            "indexes": indexes / rows}


def settle(conn, system, suffix, result):
    """Adds the bytes per measurement once tails are folded (tscoll) and
    the table vacuumed (every system): what the load leaves for good."""
    if system == "tscoll":
        conn.execute(f"SELECT tscoll.fold_tails('{table(system, suffix)}')")
    conn.execute(f"VACUUM {storage(system, suffix)}")
    result["bytes/measurement after fold + VACUUM"] = \
        total_bytes(conn, system, suffix) / result["rows"]
    return result


def ingest_insert(conn, system, directory):
    create(conn, system, "_ins")
    statements = insert_statements(system, data_file(system, directory), "_ins")

    def load():
        for s in statements:
            conn.execute(s)
    result = settle(conn, system, "_ins", measure_ingest(conn, system, "_ins", load))
    drop(conn, system, "_ins")
    return result


def ingest_transactions(conn, system, directory, rows, per_transaction=1000):
    """The data file's first rows as single-row INSERT statements sent one
    by one, 1,000 per transaction: a batch loader, JDBC's executeBatch
    with autocommit off, psycopg's executemany."""
    create(conn, system, "_txn")
    statements = insert_statements(system, data_file(system, directory), "_txn",
                                   rows_per_statement=1, limit=rows)

    def load():
        for start in range(0, len(statements), per_transaction):
            with conn.transaction():
                for s in statements[start:start + per_transaction]:
                    conn.execute(s)
    result = settle(conn, system, "_txn", measure_ingest(conn, system, "_txn", load))
    drop(conn, system, "_txn")
    return result


def insert_floor(conn, directory):
    """tscoll's 1,000-row INSERT statements into a table of one jsonb column
    whose rule discards every row: what PostgreSQL spends on the statements
    before any write (parsing, and jsonb_in on each document), rows/s."""
    conn.execute("CREATE TABLE cpu_floor (doc jsonb)")
    conn.execute("CREATE RULE discard AS ON INSERT TO cpu_floor DO INSTEAD NOTHING")
    statements = insert_statements("tscoll", data_file("tscoll", directory), "_floor")
    started = time.perf_counter()
    for s in statements:
        conn.execute(s)
    seconds = time.perf_counter() - started
    conn.execute("DROP TABLE cpu_floor")
    with open(data_file("tscoll", directory)) as f:
        rows = sum(1 for _ in f)
    return rows / seconds


# Questions asked of the single-row tables right after the load (tscoll's
# tails unfolded) and again after the fold and VACUUM: reads of buckets
# with tails must stay fast.
TAIL_QUESTIONS = ["lastpoint", "single-groupby-1-1-1", "cpu-max-all-1"]
SINGLE_ROW_START = datetime.datetime(2016, 2, 1, tzinfo=datetime.timezone.utc)


def ask_single_row_tables(conn, system, hosts, runs, result, when):
    """Adds each TAIL_QUESTIONS latency (ms) and answer, on the _one tables."""
    params = {"host": f"host_{hosts * 17 // 100}", "start": SINGLE_ROW_START.isoformat(),
              "end": (SINGLE_ROW_START + datetime.timedelta(minutes=5)).isoformat()}
    for q in TAIL_QUESTIONS:
        sql = re.sub(r"\b(cpu|cpu_jsonb|cpu_typed)\b", r"\1_one", query_text(system, q, params))
        latency, _, answer = run_query(conn, sql, runs)
        result[f"{q} ms, {when}"] = latency
        result.setdefault("answers", {})[f"{q}, {when}"] = answer


def ingest_single_rows(conn, system, hosts, clients, rows_per_client, dsn, runs):
    create(conn, system, "_one")
    # Every system's readings take the same times (the script's time is
    # the sequence's next value): TAIL_QUESTIONS' window then holds the
    # same measurements on every system, not another system's leftovers.
    conn.execute("SELECT setval('reading', 1, false)")
    with tempfile.NamedTemporaryFile("w", suffix=".pgbench", delete=False) as script:
        script.write(single_row_script(system, hosts, "_one"))
    os.chmod(script.name, 0o644)

    def load():
        subprocess.run(["pgbench", "-n", "-c", str(clients), "-j", str(clients),
                        "-t", str(rows_per_client), "-f", script.name, dsn],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = measure_ingest(conn, system, "_one", load)
    conn.execute(f"ANALYZE {storage(system, '_one')}")
    ask_single_row_tables(conn, system, hosts, runs, result, "tails unfolded")
    settle(conn, system, "_one", result)
    result["bytes/measurement of the same readings loaded in bulk"] = \
        same_readings_in_bulk(conn, system, result["rows"])
    conn.execute(f"ANALYZE {storage(system, '_one')}")
    ask_single_row_tables(conn, system, hosts, runs, result, "after fold + VACUUM")
    # A second round into the settled table: the space of folded tails and
    # dead rows is reused, or the figure grows.
    load()
    second = settle(conn, system, "_one", {"rows": count_rows(conn, system, "_one")})
    result["bytes/measurement after a second round, fold + VACUUM"] = \
        second["bytes/measurement after fold + VACUUM"]
    os.unlink(script.name)
    drop(conn, system, "_one")
    return result


def same_readings_in_bulk(conn, system, rows):
    """Bytes per measurement of the single-row table's readings loaded
    again by one INSERT ... SELECT in time order (for tscoll, the bulk
    path: each bucket written once), vacuumed: what the single-row load
    leaves after the fold is to be compared with, since its random
    readings do not compress as the data file's do."""
    create(conn, system, "_bulk")
    columns = "(doc) SELECT doc" if system == "tscoll" else "SELECT *"
    conn.execute(f"INSERT INTO {table(system, '_bulk')} {columns} "
                 f"FROM {table(system, '_one')} ORDER BY time")
    conn.execute(f"VACUUM {storage(system, '_bulk')}")
    size = total_bytes(conn, system, "_bulk") / rows
    drop(conn, system, "_bulk")
    return size


def append_cost(conn, appends=1000):
    """One session appending single rows to one series until its bucket is
    full (1,000 measurements, 1 s apart): the median latency of the first
    and the last tenth of the appends, in ms (each commit waits for its WAL
    flush, whose latency on a shared disk has spikes a mean takes in)."""
    conn.execute("SELECT tscoll.create_collection('cpu_fill', 'time', 'tags', 'seconds')")
    tags = psycopg.types.json.Jsonb({"hostname": "host_0"})
    latencies = []
    for i in range(appends):
        doc = psycopg.types.json.Jsonb({m: round((i * 37 + k * 11) % 10000 / 100, 2)
                                        for k, m in enumerate(METRICS)})
        when = datetime.datetime(2016, 3, 1, tzinfo=datetime.timezone.utc) + \
            datetime.timedelta(seconds=i)
        started = time.perf_counter()
        conn.execute("INSERT INTO cpu_fill (time, tags, doc) VALUES (%s, %s, %s)",
                     [when, tags, doc])
        latencies.append(time.perf_counter() - started)
    conn.execute("SELECT tscoll.drop_collection('cpu_fill')")
    tenth = appends // 10
    return (statistics.median(latencies[:tenth]) * 1000,
            statistics.median(latencies[-tenth:]) * 1000)


# -- queries ------------------------------------------------------------------

def parameters(hosts, hours):
    """Deterministic TSBS-like parameters: a host, and windows inside the data."""
    start = generate.START

    def window(offset, length):
        length = min(length, hours)
        offset = max(0, min(offset, hours - length))
        return start + datetime.timedelta(hours=offset), start + datetime.timedelta(hours=offset + length)
    host = f"host_{hosts * 17 // 100}"
    params = {}
    for q in QUERIES:
        p = {"host": host}
        if q == "single-groupby-1-1-1":
            p["start"], p["end"] = window(9, 1)
        elif q == "cpu-max-all-1":
            p["start"], p["end"] = window(4, 8)
        elif q == "groupby-orderby-limit":
            p["end"] = window(20.5, 0)[0]
        elif q != "lastpoint":
            p["start"], p["end"] = window(6, 12)
        params[q] = {k: v.isoformat() if isinstance(v, datetime.datetime) else v for k, v in p.items()}
    return params


def query_text(system, name, params):
    """The query file with its psql variables (:'name') replaced; a natural
    form's name is <question>.<form>."""
    directory = system + "-natural" if "." in name else system
    with open(os.path.join(HERE, "queries", directory, name + ".sql")) as f:
        text = f.read()
    return re.sub(r":'(\w+)'", lambda m: "'" + params[m.group(1)].replace("'", "''") + "'", text)


def question(name):
    return name.split(".")[0]


def normalised(rows):
    def value(v):
        if isinstance(v, float):
            return round(v, 6)
        if hasattr(v, "is_finite"):  # Decimal
            return round(float(v), 6)
        if isinstance(v, datetime.datetime):
            return v.astimezone(datetime.timezone.utc).isoformat()
        return v
    return [tuple(value(v) for v in row) for row in rows]


def by_name(rows, names):
    """Rows as {column: value}, with the members of jsonb columns (tags, doc)
    as columns of their own, so that SELECT * of a collection, of the jsonb
    table and of the typed table compare: a member never replaces a column,
    and nested objects and _id are left out."""
    result = []
    for row in rows:
        flat = {}
        for name, v in zip(names, row):
            if not isinstance(v, dict):
                flat[name] = v
        for v in row:
            if isinstance(v, dict):
                for key, member in v.items():
                    if key != "_id" and key not in flat and not isinstance(member, dict):
                        flat[key] = member
        result.append(flat)
    return result


def comparable(results):
    """Each system's rows as tuples of the same columns, in name order, and
    the systems whose rows have other columns."""
    columns = {s: tuple(sorted(rows[0])) for s, rows in results.items() if rows}
    common = sorted(set.intersection(*map(set, columns.values()))) if columns else []
    odd = [s for s, c in columns.items() if list(c) != common]
    return ({s: normalised([tuple(row[k] for k in common) for row in rows])
             for s, rows in results.items()}, odd)


def run_query(conn, sql, runs):
    """Medians of two latencies and the rows. The first ends when libpq has
    received every row, as TSBS's query runner ends when it has read every
    row without decoding the values; the second also includes psycopg's
    (pure Python) decoding of every value into Python objects, which costs
    the same for every system and dominates queries that return many rows."""
    conn.execute(sql).fetchall()  # warm-up
    received, decoded = [], []
    for _ in range(runs):
        started = time.perf_counter()
        cursor = conn.execute(sql)
        received.append(time.perf_counter() - started)
        rows = cursor.fetchall()
        decoded.append(time.perf_counter() - started)
    names = [c.name for c in cursor.description]
    return (statistics.median(received) * 1000, statistics.median(decoded) * 1000,
            by_name(rows, names))


def output_floor(conn, sql, runs):
    """The latency of the query's rows alone: a SELECT * of a table holding
    them, which every system's latency includes (output functions, transfer,
    libpq)."""
    conn.execute("DROP TABLE IF EXISTS bench_floor")
    conn.execute("CREATE TABLE bench_floor AS\n" + sql.rstrip().rstrip(";"))
    conn.execute("VACUUM ANALYZE bench_floor")
    received, _, _ = run_query(conn, "SELECT * FROM bench_floor", runs)
    conn.execute("DROP TABLE bench_floor")
    return received


# -- deletes (SPEC §6) ----------------------------------------------------------

def delete_statements(system, hosts, hours):
    """One series out of all, and the oldest 10% by time."""
    host = f"host_{hosts * 17 // 100}"
    cutoff = (generate.START + datetime.timedelta(hours=hours / 10)).isoformat()
    series = "hostname" if system == "typed" else "tags->>'hostname'"
    return {"DELETE one series": f"DELETE FROM {table(system)} WHERE {series} = '{host}'",
            "DELETE oldest 10%": f"DELETE FROM {table(system)} WHERE time < '{cutoff}'"}


def measure_delete(conn, sql, runs):
    """Median time and rows reported; each run is rolled back."""
    timings, counts = [], set()
    for _ in range(runs + 1):  # the first is a warm-up
        with conn.transaction(force_rollback=True):
            started = time.perf_counter()
            counts.add(conn.execute(sql).rowcount)
            timings.append(time.perf_counter() - started)
    return statistics.median(timings[1:]) * 1000, counts


# -- rollups (SPEC §15) ---------------------------------------------------------

ROLLUPS = [("_minute", "", "1 minute"), ("_hourly", "", "1 hour"), ("_daily", "_hourly", "1 day")]


def create_rollups(conn, collection, count):
    """0, 1 (hourly) or 3 (per minute, hourly, daily on the hourly) rollups
    of usage_user's max and avg per host."""
    chosen = {0: [], 1: [ROLLUPS[1]], 3: ROLLUPS}[count]
    for suffix, source, every in chosen:
        conn.execute("SELECT tscoll.create_rollup(%s, %s, %s, '[\"hostname\"]', "
                     "'{\"usage_user\": [\"max\", \"avg\"]}')",
                     [collection + suffix, collection + source, every])


def ingest_with_rollups(conn, directory, dsn, count):
    """COPY rows/s into a fresh collection with `count` rollups, and the
    seconds of the refresh that stores them afterwards."""
    name = f"cpu_r{count}"
    conn.execute("SELECT tscoll.create_collection(%s, 'time', 'tags', 'seconds')", [name])
    create_rollups(conn, name, count)
    conn.execute("CHECKPOINT")
    started = time.perf_counter()
    with open(data_file("tscoll", directory), "rb") as f:
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                        f"COPY {name} (doc) FROM STDIN", dsn], stdin=f, check=True)
    seconds = time.perf_counter() - started
    rows = conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
    started = time.perf_counter()
    conn.execute("SELECT tscoll.refresh_rollups()")
    refresh = time.perf_counter() - started
    conn.execute("SELECT tscoll.drop_collection(%s)", [name])
    return rows / seconds, refresh


def daily_question(system):
    """Daily max and avg of usage_user per host over the whole data set."""
    if system == "rollup":
        return "SELECT time, hostname, usage_user_max, usage_user_avg FROM cpu_daily ORDER BY 1, 2"
    if system == "typed":
        return ("SELECT date_bin('1 day', time, '1970-01-01'), to_jsonb(hostname), max(usage_user), "
                "avg(usage_user) FROM cpu_typed GROUP BY 1, 2 ORDER BY 1, 2")
    return ("SELECT date_bin('1 day', time, '1970-01-01'), tags->'hostname', "
            "max((doc->>'usage_user')::float8), avg((doc->>'usage_user')::float8) "
            "FROM cpu GROUP BY 1, 2 ORDER BY 1, 2")


def measure_rollups(conn, directory, dsn, runs):
    ingest = {n: ingest_with_rollups(conn, directory, dsn, n) for n in (0, 1, 3)}
    create_rollups(conn, "cpu", 3)
    latency, rows = {}, {}
    for system in ["rollup", "tscoll", "typed"]:
        conn.execute(daily_question(system)).fetchall()
        timings = []
        for _ in range(runs):
            started = time.perf_counter()
            result = conn.execute(daily_question(system)).fetchall()
            timings.append(time.perf_counter() - started)
        latency[system] = statistics.median(timings) * 1000
        rows[system] = [(r[0], r[1], round(r[2], 6), round(r[3], 6)) for r in result]
    agree = rows["rollup"] == rows["tscoll"] == rows["typed"]
    return ingest, latency, agree


# -- output -------------------------------------------------------------------

def machine(conn, args):
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    version = conn.execute("SHOW server_version").fetchone()[0]
    buffers = conn.execute("SHOW shared_buffers").fetchone()[0]
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    rows = args.hosts * args.hours * 360
    return [f"machine: {os.cpu_count()} cores ({cpu}), {memory:.0f} GiB RAM, "
            f"{platform.system()} {platform.release()}",
            f"PostgreSQL {version}, shared_buffers {buffers}; tscoll {commit}",
            f"scale: {args.hosts} hosts x {args.hours} h = {rows:,} measurements "
            f"({'integers' if args.decimals == 0 else f'{args.decimals} decimals'}); "
            f"single-row ingest: {args.clients} clients x {args.single_rows:,} rows; "
            f"query latency: median of {args.runs} runs after 1 warm-up, each planned, until "
            f"every row is received (then again including psycopg's decoding of the values)"]


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def print_table(header, figures, systems):
    plain = [p for p in PLAIN if p in systems and "tscoll" in systems]
    columns = ["figure"] + systems + [f"tscoll/{p}" for p in plain]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for name, values in figures:
        cells = [name] + [fmt(values.get(s)) for s in systems]
        for p in plain:
            t, b = values.get("tscoll"), values.get(p)
            cells.append(f"{t / b:.2f}" if t is not None and b else "")
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(header))
    print()
    print("\n".join(lines))


# -- main ---------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--decimals", type=int, choices=[0, 2], default=2,
                        help="metrics at 2 decimals, or integers as TSBS writes them")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--queries", default=",".join(QUERIES),
                        help="TSBS questions, in the benchmark's forms and in the natural ones")
    parser.add_argument("--no-natural", action="store_true",
                        help="the benchmark's query forms only")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per query (median)")
    parser.add_argument("--clients", type=int, default=8, help="single-row ingest clients")
    parser.add_argument("--single-rows", type=int, default=2500,
                        help="single-row ingest: rows per client")
    parser.add_argument("--no-ingest-variants", action="store_true",
                        help="COPY only (skip multi-row and single-row INSERT)")
    parser.add_argument("--no-deletes", action="store_true",
                        help="skip the DELETE timings (each run is rolled back)")
    parser.add_argument("--no-rollups", action="store_true",
                        help="skip the rollups' ingest and query figures")
    args = parser.parse_args()
    systems = [s for s in SYSTEMS if s in args.systems.split(",")]
    queries = [q for q in QUERIES if q in args.queries.split(",")]
    if not args.no_natural:
        queries += [q for q in NATURAL if question(q) in args.queries.split(",")]

    directory = os.path.join(HERE, "data",
                             generate.directory_name(args.hosts, args.hours, args.decimals))
    print(f"generating data into {directory} (once)", file=sys.stderr)
    generate.generate(args.hosts, args.hours, directory, args.decimals)

    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    # Every run is planned, as in TSBS, whose runner sends each query once
    # with its own parameters: psycopg would otherwise prepare a statement
    # on its 5th execution and reuse its plan from then on.
    conn = psycopg.connect(dbname=DATABASE, autocommit=True, prepare_threshold=None)
    conn.execute("CREATE EXTENSION tscoll")
    conn.execute(f"ALTER DATABASE {DATABASE} SET TimeZone = 'UTC'")
    conn.execute("SET TimeZone = 'UTC'")
    dsn = conn.info.dsn
    header = machine(conn, args)

    # hosts' tags and the time source for single-row ingest
    conn.execute("CREATE TABLE bench_hosts (id int PRIMARY KEY, tags jsonb, "
                 + ", ".join(f"{t} text" for t in TAGS) + ")")
    with open(data_file("jsonb", directory)) as f, conn.cursor() as cur, \
            cur.copy("COPY bench_hosts (id, tags) FROM STDIN") as copy:
        for i, line in zip(range(args.hosts), f):
            copy.write_row([i, line.split("\t")[1]])
    conn.execute("UPDATE bench_hosts SET " + ", ".join(f"{t} = tags->>'{t}'" for t in TAGS))
    conn.execute("CREATE SEQUENCE reading")

    ingest = {}
    split = None
    for s in systems:
        print(f"{s}: COPY", file=sys.stderr)
        create(conn, s)
        ingest[("COPY", s)] = ingest_copy(conn, s, directory, dsn)
        conn.execute(f"VACUUM ANALYZE {storage(s)}")
        if s == "tscoll":
            split = storage_split(conn, ingest[("COPY", s)]["rows"])
        if not args.no_ingest_variants:
            print(f"{s}: INSERT of 1,000 rows per statement", file=sys.stderr)
            ingest[("INSERT x1000", s)] = ingest_insert(conn, s, directory)
            print(f"{s}: single-row INSERT, {args.clients} clients", file=sys.stderr)
            ingest[("single-row INSERT", s)] = ingest_single_rows(
                conn, s, args.hosts, args.clients, args.single_rows, dsn, args.runs)
            print(f"{s}: single-row INSERT, 1,000 per transaction", file=sys.stderr)
            ingest[("INSERT x1, 1,000 per transaction", s)] = ingest_transactions(
                conn, s, directory, args.clients * args.single_rows)

    fill = None
    floor = None
    if "tscoll" in systems and not args.no_ingest_variants:
        print("tscoll: single-row appends filling one bucket", file=sys.stderr)
        fill = append_cost(conn)
        print("INSERT of 1,000 rows per statement, parsing alone", file=sys.stderr)
        floor = insert_floor(conn, directory)

    figures = []
    keys = ["rows/s", "server CPU us/measurement", "bytes", "bytes/measurement",
            "WAL bytes/measurement",
            "bytes/measurement after fold + VACUUM",
            "bytes/measurement after a second round, fold + VACUUM",
            "bytes/measurement of the same readings loaded in bulk", "peak private MiB"]
    keys += [f"{q} ms, {when}" for when in ["tails unfolded", "after fold + VACUUM"]
             for q in TAIL_QUESTIONS]
    for method in ["COPY", "INSERT x1000", "single-row INSERT", "INSERT x1, 1,000 per transaction"]:
        for key in keys:
            if method != "COPY" and key in ("bytes", "peak private MiB"):
                continue
            values = {s: ingest[(method, s)][key] for s in systems
                      if key in ingest.get((method, s), {})}
            if values:
                figures.append((f"{method}: {key}", values))

    params = parameters(args.hosts, args.hours)
    mismatches = []
    # Each system's single-row tables hold their own random readings: the
    # answers are compared before and after the fold, not across systems.
    for s in systems:
        answers = ingest.get(("single-row INSERT", s), {}).get("answers", {})
        for q in TAIL_QUESTIONS:
            before = answers.get(f"{q}, tails unfolded")
            if before is not None and before != answers[f"{q}, after fold + VACUUM"]:
                mismatches.append(f"{s} single-row table, {q}: the fold changed the answer")
    with_decoding = []
    floors = []
    for q in queries:
        print(f"query {q}", file=sys.stderr)
        latency, decoding, results = {}, {}, {}
        for s in systems:
            latency[s], decoding[s], results[s] = run_query(
                conn, query_text(s, q, params[question(q)]), args.runs)
        rows = {s: len(r) for s, r in results.items()}
        results, odd = comparable(results)
        if odd:
            mismatches.append(f"{q}: {odd} return other columns than the others")
        reference = results[systems[0]]
        for s in systems[1:]:
            if results[s] != reference:
                mismatches.append(f"{q}: {s} differs from {systems[0]} (rows: {rows})")
        figures.append((f"{q} ms ({rows[systems[0]]} rows)", latency))
        with_decoding.append((f"{q} ms with decoding", decoding))
        plain = next((p for p in ["typed", "jsonb"] if p in systems), systems[0])
        own = output_floor(conn, query_text("tscoll", q, params[question(q)]), args.runs) \
            if "tscoll" in systems else None
        floors.append((q, output_floor(conn, query_text(plain, q, params[question(q)]), args.runs),
                       own, plain, latency[plain]))
    figures += with_decoding

    for kind in [] if args.no_deletes else ["DELETE one series", "DELETE oldest 10%"]:
        print(kind, file=sys.stderr)
        latency, counts = {}, {}
        for s in systems:
            latency[s], counts[s] = measure_delete(
                conn, delete_statements(s, args.hosts, args.hours)[kind], args.runs)
        reference = counts[systems[0]]
        if any(c != reference or len(c) != 1 for c in counts.values()):
            mismatches.append(f"{kind}: rows reported differ: {counts}")
        figures.append((f"{kind} ms ({min(reference)} rows)", latency))

    rollups = None
    if "tscoll" in systems and "typed" in systems and not args.no_rollups:
        print("rollups", file=sys.stderr)
        rollups = measure_rollups(conn, directory, dsn, args.runs)
        if not rollups[2]:
            mismatches.append("the daily rollup differs from the same aggregates of the data")

    print_table(header, figures, systems)
    print()
    print("rows/s: higher is better; server CPU, bytes, WAL and ms: lower is better. "
          "Ratios are tscoll's figure divided by the plain table's. Server CPU: every "
          "server process's CPU time during the load (backends, WAL writer, checkpointer, "
          "autovacuum), per measurement; on a shared machine it moves less from run to "
          "run than rows/s.")
    if split:
        print("\ntscoll bytes per measurement after the COPY, by part: "
              + ", ".join(f"{part} {value:.2f}" for part, value in split.items()))
    if fill:
        print(f"\ntscoll single-row appends filling one bucket (1,000, one session): "
              f"first tenth {fill[0]:.3f} ms, last tenth {fill[1]:.3f} ms each "
              f"({fill[1] / fill[0]:.2f}x)")
    if floor:
        jsonb = ingest.get(("INSERT x1000", "jsonb"), {}).get("rows/s")
        print(f"\nINSERT x1000, parsing alone (the same statements into a table whose rule "
              f"discards every row: no write can cost less): {floor:,.0f} rows/s"
              + (f", {floor / jsonb:.2f}x the jsonb table's" if jsonb else ""))
    if rollups:
        (r0, _), (r1, f1), (r3, f3) = (rollups[0][n] for n in (0, 1, 3))
        latency = rollups[1]
        print(f"\ntscoll rollups: COPY {r0:,.0f} rows/s with none, {r1:,.0f} with 1 "
              f"({r0 / r1:.2f}x the time), {r3:,.0f} with 3 ({r0 / r3:.2f}x the time); "
              f"refresh after the COPY {f1:.2f} s (1), {f3:.2f} s (3). Daily max and avg of "
              f"usage_user per host, whole data set: daily rollup {fmt(latency['rollup'])} ms, "
              f"the collection {fmt(latency['tscoll'])} ms, typed {fmt(latency['typed'])} ms "
              f"(rollup/typed {latency['rollup'] / latency['typed']:.3f})")
    if floors:
        print("\nRows alone (SELECT * of a table holding the query's result, "
              "the part of every latency no query work can remove), ms, and as a ratio "
              "to the plain table's latency (no ratio can go below it): the plain table's "
              "rows, then tscoll's (jsonb documents where the query returns them):")
        print(", ".join(f"{q} {fmt(ms)} ({ms / plain_ms:.2g} of {plain})"
                        + (f" / {fmt(own)} ({own / plain_ms:.2g})" if own is not None else "")
                        for q, ms, own, plain, plain_ms in floors))
    if mismatches:
        print("\n!!! RESULTS DIFFER ACROSS SYSTEMS !!!")
        print("\n".join(mismatches))
        sys.exit(1)
    print("Every query returned the same rows on every system.")


if __name__ == "__main__":
    main()
