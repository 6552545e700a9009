package io.jbof.target.metrics;

import io.jbof.target.TargetServer;
import io.jbof.target.config.ListenAddress;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * Serves {@code /metrics} in Prometheus' text format on the address the operator names (the Prometheus
 * Java client's HTTP exporter over the JDK's HTTP server). It reads counts, never a volume's data.
 */
public final class MetricsServer implements AutoCloseable {
    private final HTTPServer http;

    private MetricsServer(HTTPServer http) {
        this.http = http;
    }

    public static MetricsServer start(String listen, TargetServer target) throws IOException {
        InetSocketAddress addr = ListenAddress.parse(listen).resolve();
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new TargetMetrics(target));
        try {
            return new MetricsServer(HTTPServer.builder()
                    .inetAddress(addr.getAddress())
                    .port(addr.getPort())
                    .registry(registry)
                    .buildAndStart());
        } catch (IOException e) {
            throw new IOException("cannot serve metrics on " + listen + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return http.getPort();
    }

    @Override
    public void close() {
        http.close();
    }
}
