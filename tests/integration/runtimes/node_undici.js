// Node's fetch ignores HTTPS_PROXY before Node 24 (there: NODE_USE_ENV_PROXY=1). With undici, a dispatcher reads it:
// EnvHttpProxyAgent (undici 6.10 and later) honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY; undici 5 has ProxyAgent.
// The supervisor CA comes from NODE_EXTRA_CA_CERTS, read once at start-up.
const undici = require('undici');
const agent = undici.EnvHttpProxyAgent ? new undici.EnvHttpProxyAgent()
    : new undici.ProxyAgent(process.env.HTTPS_PROXY || process.env.https_proxy);
undici.setGlobalDispatcher(agent);
undici.fetch(process.argv[2], { signal: AbortSignal.timeout(30000) })
    .then(async (r) => {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        process.stdout.write(await r.text());
    })
    .catch((e) => { console.error(e); process.exit(1); });
