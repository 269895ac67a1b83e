import Foundation
import LlamaCppBackend
import SanadCore
import SanadNative
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// "Available" means it ran: a libllama is run in a child process (`sanad-probe`) before the llama engine is called
/// available, and one that dies there is unavailable with the signal and the fix, while everything else goes on.
@Suite(
    "llama engine: the probe in a child process", .serialized,
    .enabled(if: CrashingLibrary.compilerAvailable, "needs a C compiler (cc) to build the crashing library"))
struct LlamaProbeTests {
    #if arch(x86_64)
        static let signalName = "SIGILL"
    #else
        static let signalName = "SIGTRAP"
    #endif

    /// A scratch folder with the crashing library in it, and the probe's cache kept inside it.
    static func crashingLibrary() throws -> (folder: URL, library: URL, environment: [String: String]) {
        let folder = try TestPaths.temporaryDirectory()
        let library = try CrashingLibrary.build(in: folder)
        var environment = ProcessInfo.processInfo.environment
        environment[NativeProbe.cacheVariable] = folder.appendingPathComponent("probes").path
        return (folder, library, environment)
    }

    @Test("a library that dies in llama_decode is unavailable, with the signal, the function and the fix")
    func aLibraryThatDiesIsUnavailable() async throws {
        let (folder, library, _) = try Self.crashingLibrary()
        defer {
            try? FileManager.default.removeItem(at: folder)
            if let cache = NativeProbe.cacheFile(
                kind: "llama", library: library.path, environment: ProcessInfo.processInfo.environment)
            {
                try? FileManager.default.removeItem(at: cache)
            }
        }
        guard case .unavailable(let reason) = LlamaCppBackend(library: library.path).availability else {
            Issue.record("a library whose llama_decode executes ud2 was called available")
            return
        }
        #expect(reason.contains(library.path))
        #expect(reason.contains("died with \(Self.signalName)"), "\(reason)")
        #expect(reason.contains("in llama_decode"), "\(reason)")
        #expect(reason.contains("scripts/install-llama --force"))
        // Loading a model through it is refused the same way, not crashed into.
        let options = ModelLoadOptions(engineOptions: ["library": .string(library.path)])
        do {
            _ = try await LlamaCppBackend().loadModel(at: URL(fileURLWithPath: "/nonexistent.gguf"), options: options)
            Issue.record("a model was loaded through a library that crashes")
        } catch let SanadError.backendUnavailable(id, why) {
            #expect(id == "llama")
            #expect(why.contains(Self.signalName))
        }
    }

    @Test("the verdict is cached per library digest and CPU: a rebuilt library is probed again")
    func theVerdictIsCachedPerDigest() throws {
        let (folder, library, environment) = try Self.crashingLibrary()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = NativeProbe.verdict(kind: "llama", library: library.path, environment: environment, remember: false)
        #expect(!first.passed)
        #expect(!first.cached)
        #expect(first.detail.contains(Self.signalName))
        let second = NativeProbe.verdict(
            kind: "llama", library: library.path, environment: environment, remember: false)
        #expect(second.cached)
        #expect(second.passed == first.passed && second.detail == first.detail)
        let cache = try #require(NativeProbe.cacheFile(kind: "llama", library: library.path, environment: environment))
        let text = try String(contentsOf: cache, encoding: .utf8)
        #expect(text.contains("cpu "))
        #expect(text.contains(library.path))
        // The same path, other bytes: the cached verdict no longer applies.
        _ = try CrashingLibrary.build(in: folder, marker: "rebuilt")
        let third = NativeProbe.verdict(kind: "llama", library: library.path, environment: environment, remember: false)
        #expect(!third.cached)
        #expect(!third.passed)
    }

    @Test(
        "sanad backends says unavailable and why; chat and serve fall back to pure-swift",
        .enabled(
            if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil,
            "needs the sanad binary and SmolLM2"))
    func theHostFallsBack() throws {
        let (folder, library, environment) = try Self.crashingLibrary()
        defer { try? FileManager.default.removeItem(at: folder) }
        let env = [
            "SANAD_LIBLLAMA": library.path,
            NativeProbe.cacheVariable: environment[NativeProbe.cacheVariable] ?? "",
        ]
        let backends = try SanadCLI.run(["backends", "--json"], environment: env)
        #expect(!backends.crashed)
        #expect(backends.status == 0, "\(backends.stderr)")
        let rows = try JSONValue.parse(backends.stdout)
        let llama = try #require(rows.arrayValue?.first { $0["id"]?.stringValue == "llama" })
        #expect(llama["available"]?.boolValue == false)
        let reason = try #require(llama["reason"]?.stringValue)
        #expect(reason.contains(Self.signalName) && reason.contains("llama_decode"), "\(reason)")
        print("sanad backends, llama with a library that dies in llama_decode: \(reason)")

        // A config that prefers llama: the chat answers on pure-swift and says why llama was skipped.
        let config = try Self.llamaFirstConfig(in: folder)
        let chat = try SanadCLI.run(
            ["chat", "--config", config.path], stdin: "كم رسوم تجديد الجواز؟\n", environment: env)
        #expect(!chat.crashed)
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stderr.contains("skipping backend llama") && chat.stderr.contains(Self.signalName))
        #expect((chat.stdout + chat.stderr).contains("pure-swift"))

        // The server starts on pure-swift and answers.
        let serve = try ServerProcess(["--config", config.path, "--slots", "1"], environment: env)
        defer { serve.stop() }
        #expect(serve.startup.contains("pure-swift"), "\(serve.startup)")
        #expect(serve.stderr.contains("skipping backend llama"))
        let health = try runChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c", "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1]).status)",
                "http://127.0.0.1:\(serve.port)/health",
            ])
        #expect(String(decoding: health.stdout, as: UTF8.self).contains("200"))
    }

    /// configs/tier-4gb.json with llama first and the plugin paths made absolute.
    static func llamaFirstConfig(in folder: URL) throws -> URL {
        let source = TestPaths.packageRoot.appendingPathComponent("configs/tier-4gb.json")
        var text = try String(contentsOf: source, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"../Plugins/", with: "\"\(TestPaths.packageRoot.path)/Plugins/")
        guard let start = text.range(of: "\"backends\": ["),
            let end = text.range(of: "],", range: start.upperBound..<text.endIndex)
        else { throw CocoaError(.fileReadCorruptFile) }
        text.replaceSubrange(
            start.lowerBound..<end.upperBound, with: #""backends": [{ "id": "llama" }, { "id": "pure-swift" }],"#)
        let url = folder.appendingPathComponent("llama-first.json")
        try Data(text.utf8).write(to: url)
        return url
    }
}

/// The probe of the library the tests use: where it fails, this is the one test that says so (the suites that
/// compute with libllama are disabled by `LlamaFixture.ready`, so they do not each fail, and nothing dies).
@Suite("llama engine: the installed library computes")
struct InstalledLibraryProbeTests {
    @Test(.enabled(if: LlamaFixture.libraryInstalled, "no libllama b11434 installed (scripts/install-llama)"))
    func theInstalledLibraryPassesItsProbe() throws {
        let verdict = try #require(LlamaFixture.probe)
        #expect(verdict.passed, "\(LlamaFixture.libraryPath ?? ""): \(verdict.detail)")
    }
}
