import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Java's HttpClient uses no proxy unless given one, and never reads HTTPS_PROXY: ProxySelector.getDefault() follows the
 * system properties https.proxyHost/https.proxyPort (http.proxyHost/http.proxyPort for http://) and http.nonProxyHosts,
 * whose default (localhost|127.*|[::1]|...) sends loopback destinations direct. Trust: -Djavax.net.ssl.trustStore.
 */
public class Routing {
    public static void main(String[] args) throws Exception {
        HttpClient client = HttpClient.newBuilder().proxy(ProxySelector.getDefault())
                .connectTimeout(Duration.ofSeconds(30)).build();
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(args[0]))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            System.err.println("HTTP " + r.statusCode());
            System.exit(1);
        }
        System.out.print(r.body());
    }
}
