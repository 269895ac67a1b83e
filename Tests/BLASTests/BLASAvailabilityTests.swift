import BLASBackend
import Foundation
import PureSwiftBackend
import SanadCore
import SanadNative
import SanadTestSupport
import Testing

/// OpenBLAS as Debian's libopenblas0-pthread installs it (scripts/setup), when present on this machine.
let systemOpenBLAS: String? = [
    "/usr/lib/x86_64-linux-gnu/libopenblas.so.0", "/usr/lib/aarch64-linux-gnu/libopenblas.so.0",
].first { FileManager.default.fileExists(atPath: $0) }

/// Shared objects that are certainly not CBLAS libraries (those present on this machine).
let notBLAS: [String] = [
    "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1",
].filter { FileManager.default.fileExists(atPath: $0) }

@Suite("BLAS engine availability and options")
struct BLASAvailabilityTests {
    @Test(
        "the probe runs OpenBLAS's sgemm in a child process and checks it; a library that is not CBLAS fails there",
        .enabled(if: systemOpenBLAS != nil, "libopenblas0-pthread is not installed (scripts/setup installs it)"))
    func probe() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = ProcessInfo.processInfo.environment
        environment[NativeProbe.cacheVariable] = folder.path
        let path = try #require(systemOpenBLAS)
        let verdict = NativeProbe.verdict(kind: "blas", library: path, environment: environment, remember: false)
        #expect(verdict.passed, "\(verdict.detail)")
        #expect(verdict.detail.contains("checked"))
        #expect(NativeProbe.verdict(kind: "blas", library: path, environment: environment, remember: false).cached)
        for other in notBLAS {
            let refused = NativeProbe.verdict(kind: "blas", library: other, environment: environment, remember: false)
            #expect(!refused.passed)
            #expect(refused.detail.contains("exit status 3") && refused.detail.contains("cblas_sgemm"))
        }
    }

    @Test(
        "OpenBLAS is found by the loader's search and checked",
        .enabled(if: systemOpenBLAS != nil, "libopenblas0-pthread is not installed (scripts/setup installs it)"),
        .enabled(if: ProcessInfo.processInfo.environment["SANAD_BLAS"] == nil, "SANAD_BLAS is set"))
    func systemLibrary() throws {
        guard case .available(let detail) = BLASBackend().availability else {
            Issue.record("blas unavailable: \(BLASBackend().availability)")
            return
        }
        #expect(detail.contains("OpenBLAS"))
        #expect(detail.contains("libopenblas"))
        #expect(detail.contains("dequantized per matrix into reusable scratch"))
    }

    @Test(
        "a library named by path is used, and cache-weights shows in the detail",
        .enabled(if: systemOpenBLAS != nil, "libopenblas0-pthread is not installed"))
    func namedLibrary() throws {
        let path = try #require(systemOpenBLAS)
        let availability = BLASBackend(library: path).availability(options: ["cache-weights": .bool(true)])
        guard case .available(let detail) = availability else {
            Issue.record("\(path) refused: \(availability)")
            return
        }
        #expect(detail.contains(path))
        #expect(detail.contains("F32 copies cached"))
    }

    @Test("a shared object that is not a CBLAS library is refused with the reason and the fix", arguments: notBLAS)
    func notACBLASLibrary(_ path: String) {
        guard case .unavailable(let reason) = BLASBackend(library: path).availability else {
            Issue.record("\(path) was accepted as a CBLAS library")
            return
        }
        #expect(reason.contains(path))
        #expect(reason.contains("does not export cblas_sgemm"))
        #expect(reason.contains("apt-get install libopenblas0-pthread"))
    }

    @Test("a missing file and a text file are refused, not crashed into")
    func missingAndTextFiles() throws {
        let missing = "/nonexistent/sanad/libopenblas.so.0"
        guard case .unavailable(let reason) = BLASBackend(library: missing).availability else {
            Issue.record("a missing file was reported available")
            return
        }
        #expect(reason.contains(missing) && reason.contains("does not exist"))
        #expect(reason.contains("apt-get install libopenblas0-pthread"))

        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("libopenblas.so.0").path
        try Data("not a library\n".utf8).write(to: URL(fileURLWithPath: text))
        guard case .unavailable(let textReason) = BLASBackend(library: text).availability else {
            Issue.record("a text file was accepted")
            return
        }
        #expect(textReason.contains(text))
    }

    @Test("search order: the config's library alone, else SANAD_BLAS alone, else OpenBLAS, BLIS, generic CBLAS")
    func searchOrder() {
        let names = BLASLibraryLocator.candidates(option: nil, environment: [:]).map(\.path)
        #expect(names == ["libopenblas.so.0", "libopenblas.so", "libblis.so.4", "libcblas.so.3"])
        let env = BLASLibraryLocator.candidates(option: nil, environment: ["SANAD_BLAS": "/opt/libblis.so.4"])
        #expect(env.map(\.path) == ["/opt/libblis.so.4"] && env[0].source == "SANAD_BLAS")
        let option = BLASLibraryLocator.candidates(option: "/x/libcblas.so", environment: ["SANAD_BLAS": "/y"])
        #expect(option.map(\.path) == ["/x/libcblas.so"])
    }

    @Test("a config whose blas library is wrong falls back to the next engine", .enabled(if: !notBLAS.isEmpty))
    func configFallsBack() throws {
        let wrong = try #require(notBLAS.first)
        let registry = BackendRegistry(inference: [BLASBackend(), PureSwiftBackend()])
        let chosen = try registry.firstAvailable([
            BackendChoice(id: "blas", options: ["library": .string(wrong)]),
            BackendChoice(id: "pure-swift"),
        ])
        #expect(chosen.backend.id == "pure-swift")
        #expect(chosen.skipped.count == 1 && chosen.skipped[0].hasPrefix("blas: "))
        #expect(chosen.skipped[0].contains(wrong))
    }

    @Test("loading a model through a wrong library throws backendUnavailable", .enabled(if: !notBLAS.isEmpty))
    func loadThroughWrongLibrary() async throws {
        let wrong = try #require(notBLAS.first)
        let options = ModelLoadOptions(engineOptions: ["library": .string(wrong)])
        do {
            _ = try await BLASBackend().loadModel(at: URL(fileURLWithPath: "/nonexistent.gguf"), options: options)
            Issue.record("loadModel succeeded through \(wrong)")
        } catch let SanadError.backendUnavailable(id, reason) {
            #expect(id == "blas")
            #expect(reason.contains("cblas_sgemm"))
        }
    }

    @Test(
        "engine options are strict: the message names the key",
        arguments: [
            (["cache-weight": JSONValue.bool(true)], "\"cache-weight\": unknown option"),
            (["cache-weights": JSONValue.string("yes")], "\"cache-weights\": expected true or false"),
            (["minimum-batch": JSONValue.number(0)], "\"minimum-batch\": expected a whole number"),
            (["library": JSONValue.number(3)], "\"library\": expected a path string"),
        ])
    func strictOptions(_ options: [String: JSONValue], _ expected: String) {
        do {
            _ = try BLASOptions(parsing: options)
            Issue.record("accepted \(options)")
        } catch {
            #expect("\(error)".contains(expected), "\(error)")
            #expect("\(error)".hasPrefix("blas: "))
        }
        guard case .unavailable(let reason) = BLASBackend().availability(options: options) else {
            Issue.record("available with \(options)")
            return
        }
        #expect(reason.contains(expected))
    }

    @Test("options decode")
    func optionsDecode() throws {
        let o = try BLASOptions(parsing: [
            "library": .string("/x.so"), "cache-weights": .bool(true), "minimum-batch": .number(24),
            "kernels": .string("portable"),
        ])
        #expect(o == BLASOptions(library: "/x.so", cacheWeights: true, minimumBatch: 24, kernels: .string("portable")))
        #expect(try BLASOptions(parsing: [:]) == BLASOptions())
        #expect(BLASOptions().minimumBatch == 32 && BLASOptions.defaultMinimumBatch == 32)
    }
}
