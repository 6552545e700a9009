package io.jbof.csi;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/** A storage host's TLS certificate for tests: self-signed by openssl, valid for the given IP addresses, a day long. */
record SelfSignedCert(Path cert, Path key) {
    static SelfSignedCert make(Path dir, String... ips) throws IOException {
        SelfSignedCert c = new SelfSignedCert(dir.resolve("cert.pem"), dir.resolve("key.pem"));
        NetNamespaces.run(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                c.key.toString(),
                "-out",
                c.cert.toString(),
                "-days",
                "1",
                "-subj",
                "/CN=" + ips[0],
                "-addext",
                "subjectAltName=" + Arrays.stream(ips).map(ip -> "IP:" + ip).collect(Collectors.joining(",")));
        return c;
    }
}
