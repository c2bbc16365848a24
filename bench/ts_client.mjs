// Servers driven by the TypeScript SDK's client, the client Node-based hosts use.
//
// The Python SDK's client spends more CPU per call than either server and, with 64 calls in
// flight, runs a core flat out: through it, the rate is the client's. This client costs a
// fraction of that once warm, so the rates and latencies it sees are the server's (in the
// first phase below, its own compiling still weighs on the server measured first). It imports
// the SDK the reference server installs beside itself (bench/.ref), so nothing more is
// downloaded.
//
// node bench/ts_client.mjs SDK_DIR '[{"command": ["cmd", "arg", ...], "env": {...}}, ...]' '["/path/a", ...]' WARM_CALLS
// prints a JSON list, an object a server in the order given: for each phase and tool, per-call
// seconds, calls per second in flight, the server's CPU per call (user + system, its process and
// its children, from /proc) and the client's share of a core. Each figure is taken of every
// server in turn, one right after the other and in the other order for the next figure, so that
// a machine slower for a moment weighs on all of them alike.
//
// Two phases: "first", a session's first few thousand calls, as an agent's session meets a
// server; then "warm", after WARM_CALLS more calls of each tool, when V8 has compiled the
// reference server's (and this client's) hot code: the steady state of a long session.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [sdk, servers, paths, warmCalls] = [process.argv[2], JSON.parse(process.argv[3]), JSON.parse(process.argv[4]), Number(process.argv[5])];
const { Client } = await import(pathToFileURL(`${sdk}/dist/esm/client/index.js`));
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/dist/esm/client/stdio.js`));

const SEQUENTIAL = 500, IN_FLIGHT = 64, CALLS_IN_FLIGHT = 2560, WARM_UP = 300;
const WARM_CALLS_IN_FLIGHT = 10000;
const PHASES = [["first", WARM_UP, CALLS_IN_FLIGHT], ["warm", warmCalls, WARM_CALLS_IN_FLIGHT]];
const TICKS = 100; // USER_HZ: /proc's unit of CPU time

const sessions = [];
for (const { command, env } of servers) {
  const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore", env });
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport);
  await client.listTools();
  sessions.push({ client, transport });
}

function serverCpu(transport) {
  let ticks = 0;
  const pid = transport.pid;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean);
  for (const p of [pid, ...children]) {
    const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
  }
  return ticks / TICKS;
}

async function calls({ client, transport }, tool, n, inFlight) {
  let next = 0;
  async function caller() {
    while (next < n) {
      const result = await client.callTool({ name: tool, arguments: { path: paths[next++ % paths.length] } });
      if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    }
  }
  const start = performance.now(), cpu = process.cpuUsage(), server = serverCpu(transport);
  await Promise.all(Array.from({ length: inFlight }, caller));
  const seconds = (performance.now() - start) / 1000, used = process.cpuUsage(cpu);
  return { seconds, serverCpu: (serverCpu(transport) - server) / n, clientBusy: (used.user + used.system) / 1e6 / seconds };
}

let turns = 0;
async function eachInTurn(measure) {
  const order = sessions.map((_, i) => i);
  if (turns++ % 2) order.reverse();
  const figures = [];
  for (const i of order) figures[i] = await measure(sessions[i]);
  return figures;
}

const out = sessions.map(() => Object.fromEntries(PHASES.map(([phase]) => [phase, {}])));
for (const [phase, warmUp, inFlightCalls] of PHASES) {
  for (const tool of ["get_file_info", "read_file"]) {
    await eachInTurn((s) => calls(s, tool, warmUp, IN_FLIGHT));
    const one = await eachInTurn((s) => calls(s, tool, SEQUENTIAL, 1));
    const many = await eachInTurn((s) => calls(s, tool, inFlightCalls, IN_FLIGHT));
    sessions.forEach((_, i) => {
      out[i][phase][tool] = {
        perCall: one[i].seconds / SEQUENTIAL,
        serverCpu: one[i].serverCpu,
        rate: inFlightCalls / many[i].seconds,
        rateServerCpu: many[i].serverCpu,
        clientBusy: many[i].clientBusy,
      };
    });
  }
}
for (const { client } of sessions) await client.close();
console.log(JSON.stringify(out));
