import Foundation
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `openai` engine over HTTPS (issue 44): `sanad serve` behind a TLS proxy (scripts/tls-proxy) with a test
/// certificate made by openssl for this run; libcurl carries the request, certificates are checked.
@Suite(
    "the openai engine over HTTPS",
    .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "openssl is not installed"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed"))
struct RemoteTLSTests {
    @Test("the same greedy text through the TLS proxy as in process; an unknown CA is refused naming the certificate")
    func httpsRemote() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem")
        let key = dir.appendingPathComponent("key.pem")
        let made = try runChildProcess(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.path, "-out", cert.path, "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], mergeStderr: true)
        #expect(made.status == 0, "\(String(decoding: made.stdout, as: UTF8.self))")
        let server = try ServerProcess(ServeEndToEndTests.engine + ["--no-embeddings", "--no-web-chat"])
        let proxy = try TLSProxy(cert: cert, key: key, backendPort: server.port)
        defer { proxy.stop() }

        let trusted = try writeRemoteConfig(
            in: dir, options: ["url": .string("https://127.0.0.1:\(proxy.port)"), "caFile": .string(cert.path)])
        let prompt = "The capital of France is"
        let remote = try SanadCLI.run(["generate", "--config", trusted.path, "--temp", "0", "-n", "16", prompt])
        let local = try SanadCLI.run(["generate"] + ServeEndToEndTests.engine + ["--temp", "0", "-n", "16", prompt])
        #expect(remote.status == 0 && remote.stderr.contains("backend: openai"), "\(remote.stderr)")
        #expect(remote.stdout == local.stdout && !remote.stdout.isEmpty, "\(remote.stdout) vs \(local.stdout)")
        let backends = try SanadCLI.run(["backends", "--config", trusted.path])
        #expect(backends.stdout.contains("https://127.0.0.1:\(proxy.port) (libcurl/"), "\(backends.stdout)")

        // Without the test CA the certificate is not trusted: a clear error, no text.
        let untrusted = try writeRemoteConfig(in: dir, options: ["url": .string("https://127.0.0.1:\(proxy.port)")])
        let refused = try SanadCLI.run(["generate", "--config", untrusted.path, "--temp", "0", "-n", "4", prompt])
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(
            refused.stderr.contains("certificate") && refused.stderr.contains("libcurl error 60"), "\(refused.stderr)")
        #expect(server.stop() == 0)
    }
}

/// scripts/tls-proxy as a child process, listening when the initializer returns.
final class TLSProxy {
    let process = Process()
    let port: Int

    init(cert: URL, key: URL, backendPort: Int) throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/tls-proxy")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, "--cert", cert.path, "--key", key.path, "--to", "127.0.0.1:\(backendPort)"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard let text = line.split(separator: ":").last,
            let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            throw ServerTestError("scripts/tls-proxy did not say where it listens: \(line)")
        }
        self.port = port
    }

    /// SIGKILL: a signal the test runner's blocked-signal mask (inherited by children) cannot hold back.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
