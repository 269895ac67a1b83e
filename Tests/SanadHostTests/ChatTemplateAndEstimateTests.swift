import Foundation
import GGUF
import SanadCore
import SanadHost
import SanadTestSupport
import Testing

@Suite("Chat templates")
struct ChatTemplateTests {
    let messages: [ChatMessage] = [.system("Be brief."), .user("Hi"), .assistant("Hello!"), .user(" Bye ")]

    @Test("families are recognised from the Jinja markers")
    func detect() throws {
        #expect(ChatTemplate.detect("{% for m in messages %}<|im_start|>{{m.role}}") == .chatml)
        #expect(ChatTemplate.detect("{{ '<start_of_turn>' + role }}") == .gemma)
        #expect(ChatTemplate.detect("<|start_header_id|>") == .llama3)
        #expect(ChatTemplate.detect("{{ messages }}") == nil)
        #expect(throws: SanadError.self) { try ChatTemplate.resolve(jinja: "{{ weird }}") }
        #expect(try ChatTemplate.resolve(jinja: "{{ weird }}", override: "chatml") == .chatml)
        #expect(throws: SanadError.self) { try ChatTemplate.resolve(jinja: nil, override: "nope") }
    }

    @Test("ChatML matches llama.cpp's built-in chatml")
    func chatml() {
        let text = ChatTemplate.chatml.apply(messages, addAssistantPrompt: true)
        #expect(
            text
                == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                + "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\n Bye <|im_end|>\n<|im_start|>assistant\n")
    }

    @Test("Gemma folds the system text into the next user turn and trims")
    func gemma() {
        let text = ChatTemplate.gemma.apply(messages, addAssistantPrompt: true)
        #expect(
            text
                == "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
                + "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n")
    }
}

@Suite("Memory estimate")
struct MemoryEstimateTests {
    func tinyModel() throws -> GGUFFile {
        var w = GGUFWriter()
        w.set("general.architecture", .string("llama"))
        w.set("llama.block_count", .uint32(2))
        w.set("llama.embedding_length", .uint32(8))
        w.set("llama.attention.head_count", .uint32(4))
        w.set("llama.attention.head_count_kv", .uint32(2))
        w.set("llama.context_length", .uint32(128))
        w.set("tokenizer.ggml.tokens", .strings(["a", "b", "c"]))
        w.tensors = [.f32("token_embd.weight", [8, 3], Array(repeating: 0, count: 24))]
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("tiny.gguf")
        try w.write(to: url)
        return try GGUFFile(path: url.path)
    }

    @Test("KV cache = context × layers × KV width × 2 × element size")
    func kvCache() throws {
        let s = try ModelSummary(file: try tinyModel())
        #expect(s.layerCount == 2 && s.kvHeadCount == 2 && s.keyLength == 2 && s.vocabularySize == 3)
        let e = MemoryEstimate(model: s, contextLength: 100, cacheTypeK: .f32, cacheTypeV: .f32)
        #expect(e.kvCacheBytes == 100 * 2 * (2 * (2 + 2)) * 4)
        #expect(e.weightBytes == 96)
        #expect(e.totalBytes == e.weightBytes + e.kvCacheBytes + e.scratchBytes)
        #expect(MemoryEstimate(model: s, contextLength: 100).kvCacheBytes == e.kvCacheBytes / 2)
    }

    @Test("a q8_0 cache side takes 34 bytes per 32 values (SmolLM2: 30 layers, 3 KV heads of 64)")
    func quantizedCache() throws {
        let url = try #require(TestPaths.model(TestPaths.smolLM2), "models/\(TestPaths.smolLM2) is absent")
        let s = try ModelSummary(file: try GGUFFile(path: url.path))
        let half = MemoryEstimate(model: s, contextLength: 1024)
        let q8 = MemoryEstimate(model: s, contextLength: 1024, cacheTypeK: .q8_0, cacheTypeV: .q8_0)
        let keys = MemoryEstimate(model: s, contextLength: 1024, cacheTypeK: .q8_0)
        #expect(half.kvCacheBytes == 1024 * 30 * 3 * (128 + 128))
        #expect(q8.kvCacheBytes == 1024 * 30 * 3 * (68 + 68))
        #expect(keys.kvCacheBytes == 1024 * 30 * 3 * (68 + 128))
    }

    @Test("an engine's own memory is added to the total and named in the text")
    func engineMemory() throws {
        let s = try ModelSummary(file: try tinyModel())
        let plain = MemoryEstimate(model: s, contextLength: 100)
        let engine = EngineMemory(bytes: 3 << 20, label: "BLAS F32 weights (cache-weights)")
        let e = MemoryEstimate(model: s, contextLength: 100, engine: engine)
        #expect(e.totalBytes == plain.totalBytes + 3 << 20)
        #expect(e.text.contains("+ BLAS F32 weights (cache-weights) 3.0 MiB = "))
        #expect(!plain.text.contains("BLAS"))
    }

    @Test("over budget names the numbers and the nearest tier that fits")
    func overBudget() throws {
        let s = try ModelSummary(file: try tinyModel())
        let e = MemoryEstimate(model: s, contextLength: 1 << 20)
        let small = try loadConfig(
            validConfig.replacingOccurrences(of: "\"memoryBudgetMiB\": 500", with: "\"memoryBudgetMiB\": 1"))
        let big = try loadConfig(
            validConfig.replacingOccurrences(of: "\"tier\": \"t\"", with: "\"tier\": \"huge\"")
                .replacingOccurrences(of: "\"memoryBudgetMiB\": 500", with: "\"memoryBudgetMiB\": 100000"))
        do {
            try e.check(against: small, allTiers: [small, big])
            Issue.record("expected insufficientMemory")
        } catch let error as SanadError {
            #expect(error.description.contains("tier 'huge'"), "\(error)")
            #expect(error.description.contains("KV cache"))
        }
        #expect(throws: Never.self) { try e.check(against: big, allTiers: [small, big]) }
    }
}
