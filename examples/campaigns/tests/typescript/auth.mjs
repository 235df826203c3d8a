// OAuth discovery against the campaign service, as the official TypeScript MCP SDK runs it
// for a client with no token: connect, meet the 401, follow its `resource_metadata` to the
// protected resource metadata (RFC 9728), then the authorization server's metadata, and
// start the authorization (the provider is handed the authorization URL). Nothing is
// configured but the MCP endpoint's URL. It prints one JSON line: every request the SDK
// made ({ method, url, status, wwwAuthenticate, body }), the authorization URL it reached,
// and what `connect` threw.
//
// Usage: node auth.mjs <URL of the MCP endpoint>

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url] = process.argv.slice(2);
const requests = [];
let authorizationUrl = null;

async function logged(input, init) {
  const response = await fetch(input, init);
  const entry = {
    method: init?.method ?? "GET",
    url: String(input instanceof Request ? input.url : input),
    status: response.status,
    wwwAuthenticate: response.headers.get("www-authenticate"),
    sentAuthorization: new Headers(init?.headers).has("authorization"),
  };
  if ((response.headers.get("content-type") ?? "").includes("json")) {
    entry.body = await response.clone().json().catch(() => null);
  }
  requests.push(entry);
  return response;
}

const redirectUrl = "http://127.0.0.1:9/callback";
let verifier = null;
const provider = {
  get redirectUrl() {
    return redirectUrl;
  },
  get clientMetadata() {
    return { client_name: "campaigns-auth-test", redirect_uris: [redirectUrl] };
  },
  clientInformation() {
    return { client_id: "campaigns-auth-test" };
  },
  tokens() {
    return undefined;
  },
  saveTokens() {},
  redirectToAuthorization(to) {
    authorizationUrl = to.href;
  },
  saveCodeVerifier(value) {
    verifier = value;
  },
  codeVerifier() {
    return verifier;
  },
};

const client = new Client({ name: "campaigns-auth-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  authProvider: provider,
  fetch: logged,
});
let thrown = null;
try {
  await client.connect(transport);
} catch (error) {
  thrown = `${error?.name ?? ""}: ${error?.message ?? error}`;
}
process.stdout.write(JSON.stringify({ requests, authorizationUrl, thrown }) + "\n");
process.exit(0);
