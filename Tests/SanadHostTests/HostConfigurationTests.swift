import Foundation
import SanadCore
import SanadHost
import SanadTestSupport
import Testing

let backendIDs = ["llama", "pure-swift"]
let pluginIDs = ["proactive-alerts"]

func writeConfig(_ text: String) throws -> URL {
    let url = try TestPaths.temporaryDirectory().appendingPathComponent("tier-test.json")
    try Data(text.utf8).write(to: url)
    return url
}

func loadConfig(_ text: String) throws -> HostConfiguration {
    try HostConfiguration.load(
        from: writeConfig(text), backendIDs: backendIDs, embeddingIDs: ["llama"], pluginIDs: pluginIDs)
}

let validConfig = """
    {"tier": "t", "minimumMemoryMiB": 1000, "memoryBudgetMiB": 500, "model": "m.gguf", "contextLength": 512,
     "backends": [{"id": "llama", "options": {"library": "/x/libllama.so"}, "why": "fastest here"}, {"id": "pure-swift"}],
     "embedding": {"backend": "llama", "model": "m.gguf"},
     "plugins": [{"id": "proactive-alerts", "options": {"windowDays": 90}}]}
    """

@Suite("Host configuration")
struct HostConfigurationTests {
    @Test("a valid config decodes every field")
    func valid() throws {
        let c = try loadConfig(validConfig)
        #expect(c.tier == "t" && c.minimumMemoryMiB == 1000 && c.memoryBudgetMiB == 500)
        #expect(c.backends.map(\.id) == ["llama", "pure-swift"])
        #expect(c.backends[0].options["library"] == .string("/x/libllama.so"))
        #expect(c.backends[0].why == "fastest here" && c.backends[1].why == nil)
        #expect(c.embedding == HostConfiguration.EmbeddingChoice(backend: "llama", model: "m.gguf"))
        #expect(c.plugins.first?.options["windowDays"] == .number(90))
        #expect(c.threads == nil && c.batchSize == 512)
        #expect(c.groundedPhrasing == .model && c.groundedPhrasingWhy == nil, "the model words, checked, by default")
        let templated = try loadConfig(
            validConfig.replacingOccurrences(
                of: #""tier": "t","#,
                with: #""tier": "t", "groundedReplies": {"phrasing": "template", "why": "2 of 40 drafts passed"},"#))
        #expect(templated.groundedPhrasing == .template && templated.groundedPhrasingWhy == "2 of 40 drafts passed")
    }

    @Test(
        "invalid configs name the key path and the valid choices",
        arguments: [
            ("unknown top-level key", #"{"tier":"t","bogus":1}"#, "bogus: unknown key; valid keys here: tier"),
            (
                "unknown backend", #"REPLACE"backends":[{"id":"cuda"}]}"#,
                "backends[0].id: 'cuda' is not one of: llama, pure-swift"
            ),
            (
                "unknown plugin", #"REPLACE"backends":[{"id":"llama"}],"plugins":[{"id":"x"}]}"#,
                "plugins[0].id: 'x' is not one of: proactive-alerts"
            ),
            ("wrong type", #"{"tier":5}"#, "tier: expected a string, found a number"),
            ("missing key", #"{"tier":"t"}"#, "backends: missing required key"),
            ("empty backends", #"REPLACE"backends":[]}"#, "backends: is empty"),
            ("unknown nested key", #"REPLACE"backends":[{"id":"llama","lib":"x"}]}"#, "backends[0].lib: unknown key"),
            (
                "why not a string", #"REPLACE"backends":[{"id":"llama","why":5}]}"#,
                "backends[0].why: expected a string, found a number"
            ),
            (
                "negative context",
                #"{"tier":"t","minimumMemoryMiB":1,"memoryBudgetMiB":1,"model":"m","contextLength":-4,"backends":[{"id":"llama"}]}"#,
                "contextLength: -4 is out of range: must be in 16…"
            ),
            ("not JSON", "{tier", "invalid JSON"),
            (
                "unknown phrasing", #"REPLACE"backends":[{"id":"llama"}],"groundedReplies":{"phrasing":"ai"}}"#,
                "groundedReplies.phrasing: 'ai' is not one of: model, template"
            ),
        ])
    func invalid(name: String, text: String, expected: String) throws {
        let prefix = #"{"tier":"t","minimumMemoryMiB":1,"memoryBudgetMiB":1,"model":"m","contextLength":64,"#
        let url = try writeConfig(text.replacingOccurrences(of: "REPLACE", with: prefix))
        do {
            _ = try HostConfiguration.load(from: url, backendIDs: backendIDs, embeddingIDs: [], pluginIDs: pluginIDs)
            Issue.record("\(name): expected an error")
        } catch let error as SanadError {
            #expect(error.description.contains(expected), "\(name): \(error)")
            #expect(error.description.hasPrefix(url.path), "the message names the file")
        }
    }

    /// Every plugin the sanad executable registers (Sources/sanad/Wiring.swift); `sanad config` checks the real registry.
    let shippedPluginIDs = [
        "proactive-alerts", "dependents", "absher-services", "ocr-ingest", "forms", "credit-scoring",
    ]

    @Test("the shipped tier configs are valid and ordered by memory")
    func shippedConfigs() throws {
        let dir = TestPaths.packageRoot.appendingPathComponent("configs")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("tier-") }
        #expect(names.count >= 3)
        let configs = try names.map {
            try HostConfiguration.load(
                from: dir.appendingPathComponent($0), backendIDs: ["pure-swift", "llama", "blas"],
                embeddingIDs: ["llama", "pure-swift"], pluginIDs: shippedPluginIDs)
        }
        for c in configs {
            #expect(c.backends.contains { $0.id == "pure-swift" }, "\(c.tier) falls back to the built-in engine")
            #expect(c.memoryBudgetMiB < c.minimumMemoryMiB)
        }
    }
}

@Suite("Tier selection")
struct TierSelectionTests {
    func tier(_ name: String, _ minimum: Int) throws -> HostConfiguration {
        try loadConfig(
            validConfig.replacingOccurrences(of: "\"tier\": \"t\"", with: "\"tier\": \"\(name)\"")
                .replacingOccurrences(of: "\"minimumMemoryMiB\": 1000", with: "\"minimumMemoryMiB\": \(minimum)"))
    }

    @Test(
        "picks the largest tier the usable memory meets",
        arguments: [
            (physical: 24_000, cgroup: nil, expected: "8gb"),
            (physical: 24_000, cgroup: 3_500, expected: "4gb"),
            (physical: 2_000, cgroup: nil, expected: "2gb"),
            (physical: 1_000, cgroup: nil, expected: "2gb"),
            (physical: 6_144, cgroup: 8_000, expected: "8gb"),
        ] as [(physical: Int, cgroup: Int?, expected: String)])
    func choose(physical: Int, cgroup: Int?, expected: String) throws {
        let tiers = [try tier("2gb", 1536), try tier("8gb", 6144), try tier("4gb", 3072)]
        let memory = SystemMemory(physicalBytes: physical << 20, cgroupLimitBytes: cgroup.map { $0 << 20 })
        let chosen = try #require(TierSelection.choose(from: tiers, memory: memory))
        #expect(chosen.config.tier == expected, "\(chosen.reason)")
        if cgroup != nil { #expect(chosen.reason.contains("cgroup")) }
    }

    @Test("reads a cgroup v2 limit and treats 'max' as unlimited")
    func cgroupFiles() throws {
        let dir = try TestPaths.temporaryDirectory()
        try Data("2147483648\n".utf8).write(to: dir.appendingPathComponent("memory.max"))
        #expect(SystemMemory.cgroupLimit(root: dir.path) == 2_147_483_648)
        try Data("max\n".utf8).write(to: dir.appendingPathComponent("memory.max"))
        #expect(SystemMemory.cgroupLimit(root: dir.path) == nil)
        #expect(SystemMemory.current().physicalBytes > 0)
    }
}

@Suite("Host configuration: strict reading and ranges")
struct HostConfigurationStrictTests {
    func problem(_ text: String) -> String {
        do {
            _ = try loadConfig(text)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test(
        "absurd numbers are refused naming the key, never trapping",
        arguments: [
            ("\"contextLength\": 512", "\"contextLength\": 9e14", "contextLength"),
            ("\"contextLength\": 512", "\"contextLength\": 5e9", "contextLength"),
            ("\"memoryBudgetMiB\": 500", "\"memoryBudgetMiB\": 1e13", "memoryBudgetMiB"),
            ("\"contextLength\": 512", "\"contextLength\": 512, \"threads\": 5e9", "threads"),
            ("\"contextLength\": 512", "\"contextLength\": 512.5", "contextLength"),
        ])
    func ranges(original: String, replacement: String, key: String) {
        let text = validConfig.replacingOccurrences(of: original, with: replacement)
        let p = problem(text)
        #expect(p.contains(": \(key): "), "\(p)")
        #expect(p.contains("out of range") || p.contains("whole number"), "\(p)")
    }

    @Test("trailing commas and duplicate keys are refused with line and column")
    func strict() {
        let trailing = problem(validConfig.replacingOccurrences(of: "\"fastest here\"}", with: "\"fastest here\",}"))
        #expect(trailing.contains("line 2") && trailing.contains("trailing comma"), "\(trailing)")
        let duplicate = problem(
            validConfig.replacingOccurrences(of: "\"tier\": \"t\",", with: "\"tier\": \"t\", \"tier\": \"u\","))
        #expect(duplicate.contains("line 1") && duplicate.contains("duplicate key 'tier'"), "\(duplicate)")
    }

    @Test("engine options are checked at load with the key path")
    func engineOptions() throws {
        let url = try writeConfig(validConfig)
        do {
            _ = try HostConfiguration.load(
                from: url, backendIDs: backendIDs, embeddingIDs: ["llama"], pluginIDs: pluginIDs,
                validateOptions: { id, options in
                    if id == "llama", options["library"] != nil { throw SanadError.engine("option 'library': no") }
                })
            Issue.record("accepted")
        } catch {
            #expect("\(error)".contains("backends[0].options: option 'library': no"), "\(error)")
        }
    }
}
