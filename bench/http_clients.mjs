// Many sessions at once, driven by the TypeScript SDK's client: calls per second with 64 calls
// in flight, spread over 16 streamable-HTTP sessions of an fsmcp server (or all on the one stdio
// session of a server that speaks stdio alone, as the reference server does).
//
// node bench/http_clients.mjs SDK_DIR '[{"url": "...", "token": "..."} | {"command": [...], "env": {...}}, ...]' '["/path/a", ...]' WARM_CALLS
// prints a JSON list, an object a server in the order given: for each tool, calls per second in
// flight, the client's share of a core meanwhile, and the server's CPU per call (its processes,
// workers included, from /proc; none for an HTTP server this client did not start: its pid is
// given as "pid"). Every server first gets WARM_CALLS calls of each tool (a warm reference
// server: V8 has compiled its hot code), then each figure is taken of every server in turn,
// in the other order for the next figure.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [sdk, servers, paths, warmCalls] = [process.argv[2], JSON.parse(process.argv[3]), JSON.parse(process.argv[4]), Number(process.argv[5])];
const { Client } = await import(pathToFileURL(`${sdk}/dist/esm/client/index.js`));
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/dist/esm/client/stdio.js`));
const { StreamableHTTPClientTransport } = await import(pathToFileURL(`${sdk}/dist/esm/client/streamableHttp.js`));

const SESSIONS = 16, IN_FLIGHT = 64, CALLS = 1280, ROUNDS = 3;
const TICKS = 100; // USER_HZ: /proc's unit of CPU time

async function open(server) {
  const clients = [];
  let pid = server.pid;
  for (let i = 0; i < (server.url ? SESSIONS : 1); i++) {
    const transport = server.url
      ? new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } })
      : new StdioClientTransport({ command: server.command[0], args: server.command.slice(1), stderr: "ignore", env: server.env });
    const client = new Client({ name: "bench", version: "0" });
    await client.connect(transport);
    await client.listTools();
    if (!server.url) pid = transport.pid;
    clients.push(client);
  }
  return { clients, pid };
}

function tree(pid) {
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean);
  } catch {
    return [];
  }
  return [pid, ...children.flatMap((c) => tree(c))];
}

function serverCpu(pid) {
  let ticks = 0;
  for (const p of tree(pid)) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {}
  }
  return ticks / TICKS;
}

async function calls({ clients, pid }, tool, n) {
  let next = 0;
  async function caller(k) {
    const client = clients[k % clients.length]; // 64 in flight: 4 on each of 16 sessions
    while (next < n) {
      const result = await client.callTool({ name: tool, arguments: { path: paths[next++ % paths.length] } });
      if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    }
  }
  const start = performance.now(), cpu = process.cpuUsage(), server = serverCpu(pid);
  await Promise.all(Array.from({ length: IN_FLIGHT }, (_, k) => caller(k)));
  const seconds = (performance.now() - start) / 1000, used = process.cpuUsage(cpu);
  return { rate: n / seconds, serverCpu: (serverCpu(pid) - server) / n, clientBusy: (used.user + used.system) / 1e6 / seconds };
}

const opened = [];
for (const server of servers) opened.push(await open(server));
for (const s of opened) for (const tool of ["get_file_info", "read_file"]) await calls(s, tool, warmCalls);

let turns = 0;
const out = opened.map(() => ({}));
for (const tool of ["get_file_info", "read_file"]) {
  const samples = opened.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = opened.map((_, i) => i);
    if (turns++ % 2) order.reverse();
    for (const i of order) samples[i].push(await calls(opened[i], tool, CALLS));
  }
  samples.forEach((runs, i) => {
    const median = (key) => runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
    out[i][tool] = { rate: median("rate"), serverCpu: median("serverCpu"), clientBusy: median("clientBusy") };
  });
}
for (const { clients } of opened) for (const client of clients) await client.close();
console.log(JSON.stringify(out));
