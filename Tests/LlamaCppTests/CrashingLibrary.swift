import Foundation
import LlamaCppBackend
import SanadTestSupport

/// A shared object that passes the llama backend's ABI guard (every symbol it looks for, b11434's version strings
/// and default parameters) and executes an illegal instruction (`ud2`) in `llama_decode`: what a libllama built with
/// kernels the CPU cannot run looks like to Sanad. Compiled with `cc` in the test.
enum CrashingLibrary {
    static let compilerAvailable: Bool = ["/usr/bin/cc", "/usr/bin/gcc", "/usr/local/bin/cc"].contains {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Functions that must return something usable for the engine to reach `llama_decode`.
    static let answers: [String: String] = [
        "llama_model_load_from_file": "void *%s(void) { return dummy; }",
        "llama_init_from_model": "void *%s(void) { return dummy; }",
        "llama_model_get_vocab": "void *%s(void) { return dummy; }",
        "llama_get_memory": "void *%s(void) { return dummy; }",
        "llama_version": "const char *%s(void) { return \"0.6.0\"; }",
        "llama_vocab_n_tokens": "int %s(void) { return 64; }",
        "llama_model_n_ctx_train": "int %s(void) { return 128; }",
        "llama_model_n_embd": "int %s(void) { return 256; }",
        "llama_n_ctx": "unsigned %s(void) { return 128; }",
        "llama_n_ctx_seq": "unsigned %s(void) { return 128; }",
        "llama_n_batch": "unsigned %s(void) { return 64; }",
        "llama_n_ubatch": "unsigned %s(void) { return 64; }",
        "llama_vocab_bos": "int %s(void) { return 63; }",
        "llama_model_meta_val_str": "int %s(void) { return -1; }",
        "llama_memory_seq_pos_max": "int %s(void) { return -1; }",
        "llama_decode": "int %s(void) { TRAP(); return 0; }",
    ]

    /// The C source; `marker` is a string in the library, so two markers give two different files.
    static func source(marker: String = "") -> String {
        func bytes<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { $0.map { String($0) }.joined(separator: ",") }
        }
        let model = MemoryLayout<LlamaModelParams>.size
        let context = MemoryLayout<LlamaContextParams>.size
        var c = """
            // A fake libllama for Sanad's probe tests \(marker)
            #include <string.h>
            #if defined(__x86_64__)
            #define TRAP() __asm__ volatile("ud2")
            #else
            #define TRAP() __builtin_trap()
            #endif
            static char dummy[4096];
            static const unsigned char model_defaults[\(model)] = {\(bytes(LlamaModelParams.b11434Defaults))};
            static const unsigned char context_defaults[\(context)] = {\(bytes(LlamaContextParams.b11434Defaults))};
            struct model_params { unsigned char b[\(model)]; };
            struct context_params { unsigned char b[\(context)]; };
            struct model_params llama_model_default_params(void) {
                struct model_params p; memcpy(p.b, model_defaults, sizeof p.b); return p;
            }
            struct context_params llama_context_default_params(void) {
                struct context_params p; memcpy(p.b, context_defaults, sizeof p.b); return p;
            }
            const char *ggml_version(void) { return "0.26.0"; }
            const char *sanad_fake_marker = "\(marker)";

            """
        let names =
            LlamaABIGuard.requiredSymbols + LlamaABIGuard.introducedSymbols.map(\.symbol)
            + LlamaABIGuard.retiringSymbols.map(\.symbol)
        for name in names where !name.hasSuffix("_default_params") {
            c += (answers[name] ?? "long %s(void) { return 0; }").replacingOccurrences(of: "%s", with: name) + "\n"
        }
        return c
    }

    /// Compiles the library into `directory` as `libllama.so`; `marker` changes its bytes (a "rebuilt" library).
    static func build(in directory: URL, marker: String = "") throws -> URL {
        let c = directory.appendingPathComponent("fake-llama.c")
        let so = directory.appendingPathComponent("libllama.so")
        try Data(source(marker: marker).utf8).write(to: c)
        let r = try runChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["cc", "-shared", "-fPIC", "-O1", "-o", so.path, c.path])
        guard r.status == 0 else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [NSLocalizedDescriptionKey: "cc failed: \(String(decoding: r.stderr, as: UTF8.self))"])
        }
        return so
    }
}
