// Node's fetch ignores HTTPS_PROXY before Node 24 (there: NODE_USE_ENV_PROXY=1). With undici, a dispatcher reads it:
// EnvHttpProxyAgent (undici 6.10 and later) honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY. (undici 5's ProxyAgent sends
// the proxy's address as Host on CONNECT, which the supervisor refuses as host_mismatch.)
// The supervisor CA comes from NODE_EXTRA_CA_CERTS, read once at start-up.
const undici = require('undici');
undici.setGlobalDispatcher(new undici.EnvHttpProxyAgent());
setTimeout(() => { console.error('timed out'); process.exit(2); }, 30000).unref();
undici.fetch(process.argv[2])
    .then(async (r) => {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        process.stdout.write(await r.text());
    })
    .catch((e) => { console.error(e); process.exit(1); });
