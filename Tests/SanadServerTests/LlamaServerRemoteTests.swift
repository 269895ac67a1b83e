import Foundation
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `openai` engine (Backends/Remote) against llama.cpp's own `llama-server` (b11434, installed by
/// scripts/install-llama beside the other tools), with SmolLM2: the text the engine streams is the text
/// llama-server answers in one piece for the same request, chat works through llama-server's template, and a
/// server that went away is a clear error.
@Suite(
    "the openai engine against llama-server",
    .serialized,
    .enabled(if: LlamaServerProcess.executable != nil, "llama-server is not installed; run scripts/install-llama"),
    .enabled(if: TestPaths.model(TestPaths.smolLM2) != nil, "models/\(TestPaths.smolLM2) is absent"))
struct LlamaServerRemoteTests {
    @Test("streamed greedy text equals llama-server's own answer; chat; a clear error when it is down")
    func remoteEngineAgainstLlamaServer() throws {
        let model = try #require(TestPaths.model(TestPaths.smolLM2))
        let server = try LlamaServerProcess(model: model)
        defer { server.stop() }
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try writeRemoteConfig(
            in: dir, options: ["url": .string("http://127.0.0.1:\(server.port)"), "model": .string("SmolLM2")])

        let prompt = "The capital of France is"
        let streamed = try SanadCLI.run(["generate", "--config", file.path, "--temp", "0", "-n", "16", prompt])
        #expect(streamed.status == 0 && streamed.stderr.contains("backend: openai"), "\(streamed.stderr)")
        let direct = try request(
            server.port, "POST", "/v1/completions",
            body: #"{"prompt":"\#(prompt)","max_tokens":16,"temperature":0}"#)
        let text = try #require(direct.json?["choices"]?.arrayValue?.first?["text"]?.stringValue, "\(direct.body)")
        #expect(!text.isEmpty)
        // sanad generate ends its output with a newline.
        #expect(streamed.stdout == text + "\n", "\(streamed.stdout.debugDescription) vs \(text.debugDescription)")

        let chat = try SanadCLI.run(
            [
                // With a system message: without one SmolLM2's own template adds its default system turn, after
                // which the model does not answer with Paris (ServeEndToEndTests.chat).
                "generate", "--config", file.path, "--chat", "--system", "You are a helpful assistant.", "--temp", "0",
                "-n", "24", "What is the capital of France?",
            ])
        #expect(chat.status == 0 && chat.stdout.contains("Paris"), "\(chat.stdout) \(chat.stderr)")

        server.stop()
        let down = try SanadCLI.run(["generate", "--config", file.path, "--temp", "0", "-n", "4", prompt])
        #expect(down.status == 1 && down.stderr.contains("is the server running?"), "\(down.stderr)")
    }
}

/// A `llama-server` child process on a free port, ready (GET /health answers 200) when the initializer returns.
final class LlamaServerProcess {
    static let executable: URL? = {
        let url = LlamaTools.prefix.appendingPathComponent("bin/llama-server")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }()

    let process = Process()
    let port: Int

    init(model: URL) throws {
        guard let executable = Self.executable else { throw ServerTestError("llama-server is not installed") }
        port = try Self.freePort()
        process.executableURL = executable
        process.arguments = ["-m", model.path, "--port", "\(port)", "-c", "1024", "-t", "2", "-np", "1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            guard process.isRunning else {
                throw ServerTestError("llama-server exited with \(process.terminationStatus)")
            }
            if let health = try? request(port, "GET", "/health"), health.status == 200 { return }
            usleep(200_000)
        }
        stop()
        throw ServerTestError("llama-server was not ready within 120 s")
    }

    /// SIGKILL: a child of the test runner may inherit a signal mask that blocks SIGTERM.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// A port the kernel hands out now (bound, read, released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerTestError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw ServerTestError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
