// A new user's agent: the official TypeScript SDK client with the token
// `vigil init` made, as an MCP client sends it (cli/init_path_tmux_test.go).
// usage: node newuser.mjs pause  URL TOKEN_FILE TASK_ID DEVICE   (media_pause, no lease)
//        node newuser.mjs result URL TOKEN_FILE TASK_ID          (get_task_result)
// prints one JSON object: {isError, result}
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [what, url, tokenFile, taskId, device] = process.argv.slice(2);
const token = readFileSync(tokenFile, "utf8").split("\n")[0].trim(); // $(cat TOKEN_FILE)
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "new-user-agent", version: "1.0.0" });
await client.connect(transport);
const call =
  what === "pause"
    ? { name: "media_pause", arguments: { task_id: taskId, target_device: device, wait_seconds: 0 } }
    : { name: "get_task_result", arguments: { task_id: taskId, wait_seconds: 30 } };
const res = await client.callTool(call, undefined, { timeout: 120000 });
await client.close();
process.stdout.write(JSON.stringify({ isError: res.isError ?? false, result: res.structuredContent }) + "\n");
