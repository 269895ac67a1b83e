// swift-tools-version:6.0
// Sanad: an on-device LLM inference host. No package dependencies: native engines (libllama, OpenBLAS) are
// found and loaded at run time with dlopen.
import PackageDescription

// The pure-Swift engine's kernels are compiled once portably and once per x86-64 level (Backends/PureSwift/
// Kernels/KernelSet.swift); the engine picks at run time the fastest build the CPU runs. On other architectures the
// extra builds compile portably and are never picked.
#if arch(x86_64)
    let avx2Flags = ["-target-cpu", "haswell"]  // AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE (x86-64-v3)
    let avx512Flags = ["-target-cpu", "skylake-avx512"]  // + AVX-512 F/CD/BW/DQ/VL (x86-64-v4)
    let avx512VNNIFlags = ["-target-cpu", "cascadelake"]  // + AVX-512 VNNI (vpdpbusd: bytes × bytes into int32)
#else
    let avx2Flags: [String] = []
    let avx512Flags: [String] = []
    let avx512VNNIFlags: [String] = []
#endif
// Only the kernel targets (raw-pointer loops over validated shapes) are built without Swift's checks; the engine,
// the tokenizers and everything else that reads untrusted input keep their bounds and precondition checks.
let kernelFlags = ["-Ounchecked"]

let package = Package(
    name: "Sanad",
    platforms: [.macOS(.v15)],
    products: [
        // Programs.
        .executable(name: "sanad", targets: ["sanad"]),
        .executable(name: "sanad-probe", targets: ["sanad-probe"]),
        // The contract and the host: what an app builds on.
        .library(name: "SanadCore", targets: ["SanadCore"]),
        .library(name: "SanadChat", targets: ["SanadChat"]),
        .library(name: "SanadHost", targets: ["SanadHost"]),
        .library(name: "SanadStructured", targets: ["SanadStructured"]),
        .library(name: "SanadIndex", targets: ["SanadIndex"]),
        .library(name: "SanadServer", targets: ["SanadServer"]),
        .library(name: "SanadCommandLine", targets: ["SanadCommandLine"]),
        .library(name: "GGUF", targets: ["GGUF"]),
        .library(name: "SanadSigning", targets: ["SanadSigning"]),
        .library(name: "SanadReceipts", targets: ["SanadReceipts"]),
        // Engines: an app picks the ones it ships (an app can depend on core + pure-swift + forms).
        .library(name: "PureSwiftBackend", targets: ["PureSwiftBackend"]),
        .library(name: "BLASBackend", targets: ["BLASBackend"]),
        .library(name: "LlamaCppBackend", targets: ["LlamaCppBackend"]),
        .library(name: "RemoteBackend", targets: ["RemoteBackend"]),
        // Plugins.
        .library(
            name: "AbsherPlugins",
            targets: ["AbsherData", "ProactiveAlertsPlugin", "DependentsPlugin", "ServicesPlugin"]),
        .library(name: "OCRIngestPlugin", targets: ["OCRIngestPlugin"]),
        .library(name: "FormsPlugin", targets: ["FormsPlugin"]),
        .library(name: "CreditScoringPlugin", targets: ["CreditScoringPlugin"]),
        .library(name: "CreditReceiver", targets: ["CreditReceiver"]),
    ],
    targets: [
        // MARK: Foundations: files, model formats, checksums, native libraries (Foundation only below them).

        // File safety below every reader and loader: regular files only (a FIFO never blocks), read-only mappings,
        // ELF shared objects checked before dlopen sees them.
        .target(name: "SanadFiles", path: "Sources/SanadFiles", exclude: ["README.md"]),
        // Memory-mapped, validated GGUF reader shared by engines, `sanad models` and memory estimates.
        .target(name: "GGUF", dependencies: ["SanadFiles"], path: "Sources/GGUF", exclude: ["README.md"]),
        // A validated, memory-mapped safetensors reader (sentence-embedding weights).
        .target(
            name: "SafeTensors", dependencies: ["SanadFiles"], path: "Sources/SafeTensors", exclude: ["README.md"]),
        // Checksums (CRC-32, SHA-256) and the ZIP container, for files Sanad writes for people to keep.
        .target(name: "SanadArchive", path: "Sources/SanadArchive", exclude: ["README.md"]),
        // Optional native libraries found and opened at run time (dlopen), with a reason and a fix when missing.
        // Each library is proved to compute in a child process (NativeProbe, the sanad-probe program) before use.
        .target(
            name: "SanadNative", dependencies: ["SanadFiles", "SanadArchive"], path: "Sources/SanadNative",
            exclude: ["README.md"]),

        // MARK: The contract: engines, tokenizers, chat and plugins, structured output, retrieval.

        // What the device signs with: libcrypto (dlopen), SHA-256, the device's Ed25519 key, RFC 8785 canonical JSON
        // and the one signing scheme of credit records and generation receipts.
        .target(
            name: "SanadSigning", dependencies: ["SanadNative", "SanadCore", "SanadArchive"],
            path: "Sources/SanadSigning",
            exclude: ["README.md"]),
        // Signed generation receipts: what they state, their verification, the replay comparison.
        .target(
            name: "SanadReceipts", dependencies: ["SanadSigning", "SanadCore", "SanadStructured", "GGUF"],
            path: "Sources/SanadReceipts",
            exclude: ["README.md"]),

        // The engine contract: backends, sessions, generation parameters, chat messages and templates, JSON values,
        // tools, errors, the backend registry.
        .target(name: "SanadCore", dependencies: ["GGUF"], path: "Sources/SanadCore", exclude: ["README.md"]),
        // The tokenizers llama.cpp's vocabularies need (BPE, SentencePiece, WordPiece), read from GGUF or a
        // tokenizer folder: shared by the pure-Swift engine and the remote engine. Checked code (untrusted arrays).
        .target(
            name: "SanadTokenizers", dependencies: ["GGUF"], path: "Sources/SanadTokenizers", exclude: ["README.md"]),
        // The chat and plugin layer: chat session, entries, deep links, navigation, grounding, plugins, the product.
        .target(name: "SanadChat", dependencies: ["SanadCore"], path: "Sources/SanadChat", exclude: ["README.md"]),
        // Structured output: JSON Schema → byte matcher → a constraint stage of the sampling chain; tool calls.
        .target(
            name: "SanadStructured", dependencies: ["SanadCore"], path: "Sources/SanadStructured",
            exclude: ["README.md"]),
        // The vector index plugins and `sanad index` use.
        .target(
            name: "SanadIndex", dependencies: ["SanadArchive"], path: "Sources/SanadIndex", exclude: ["README.md"]),

        // MARK: Engines.

        // The pure-Swift engine's kernels (portable build) and their per-CPU builds: the only code built without
        // Swift's checks.
        .target(
            name: "PureSwiftKernels", dependencies: ["GGUF"], path: "Backends/PureSwift/Kernels",
            exclude: ["README.md"], swiftSettings: [.unsafeFlags(kernelFlags)]),
        .target(
            name: "PureSwiftKernelsAVX2", dependencies: ["PureSwiftKernels"], path: "Backends/PureSwift/ISA/AVX2",
            swiftSettings: [.define("SANAD_KERNEL_BUILD_AVX2"), .unsafeFlags(kernelFlags + avx2Flags)]),
        .target(
            name: "PureSwiftKernelsAVX512", dependencies: ["PureSwiftKernels"], path: "Backends/PureSwift/ISA/AVX512",
            swiftSettings: [.define("SANAD_KERNEL_BUILD_AVX512"), .unsafeFlags(kernelFlags + avx512Flags)]),
        // The AVX-512 build plus VNNI: it compiles everything the AVX-512 build does (so it defines that build's
        // flag too) and replaces some integer products with `vpdpbusd`.
        .target(
            name: "PureSwiftKernelsAVX512VNNI", dependencies: ["PureSwiftKernels"],
            path: "Backends/PureSwift/ISA/AVX512VNNI",
            swiftSettings: [
                .define("SANAD_KERNEL_BUILD_AVX512"), .define("SANAD_KERNEL_BUILD_AVX512VNNI"),
                .unsafeFlags(kernelFlags + avx512VNNIFlags),
            ]),
        // The always-available engine: pure Swift, reads GGUF.
        .target(
            name: "PureSwiftBackend",
            dependencies: [
                "SanadCore", "GGUF", "SanadFiles", "SafeTensors", "SanadTokenizers", "PureSwiftKernels",
                "PureSwiftKernelsAVX2", "PureSwiftKernelsAVX512", "PureSwiftKernelsAVX512VNNI",
            ],
            path: "Backends/PureSwift",
            exclude: ["Architectures/README.md", "Kernels", "ISA"],
            // Built with Swift's checks: the engine's own code (forward passes, attention bookkeeping, tokenizers'
            // callers) is about 2 % of the samples of a profile (perf, Gemma 3 and SmolLM2, prompts and generation,
            // 2026-11-27); the kernels it calls are the unchecked targets above.
        ),
        // The pure-Swift engine with CBLAS sgemm (OpenBLAS, BLIS) through dlopen for prompt batches.
        .target(
            name: "BLASBackend", dependencies: ["SanadCore", "GGUF", "SanadNative", "PureSwiftBackend"],
            path: "Backends/BLAS", exclude: ["README.md"]),
        // llama.cpp's libllama through dlopen, with an ABI guard and a probe.
        .target(
            name: "LlamaCppBackend", dependencies: ["SanadCore", "GGUF", "SanadFiles", "SanadNative"],
            path: "Backends/LlamaCpp", exclude: ["README.md"]),
        // The `openai` engine: an OpenAI-compatible server runs the model; tokenizer and template local.
        .target(
            name: "RemoteBackend", dependencies: ["SanadCore", "GGUF", "SanadTokenizers", "SanadNative"],
            path: "Backends/Remote",
            exclude: ["README.md"]),

        // MARK: The host and its front ends.

        // The host: HostContext (config and tier, tuning, engines, plugins, data folders, clock, product), tier
        // configs, memory tiers and estimates, model summaries, opening a session.
        .target(
            name: "SanadHost", dependencies: ["SanadCore", "SanadChat", "GGUF"], path: "Sources/SanadHost",
            exclude: ["README.md"]),
        // Command plumbing in swift-argument-parser's style (arguments, usage errors, exit codes, nested commands)
        // and the host as commands open it: the CLI's generic commands and the plugins' own (Plugins/*/CLI).
        .target(
            name: "SanadCommandLine", dependencies: ["SanadCore", "SanadChat", "SanadHost", "SanadIndex"],
            path: "Sources/SanadCommandLine", exclude: ["README.md"]),
        // `sanad serve`: an HTTP/1.1 server on POSIX sockets, the OpenAI-compatible API, slots, metrics, the web chat.
        .target(
            name: "SanadServer", dependencies: ["SanadCore", "SanadStructured", "SanadChat", "SanadReceipts"],
            path: "Sources/SanadServer", exclude: ["README.md"]),

        // MARK: Feature plugins: one target per folder under Plugins/ (see Plugins/README.md).

        // What the Absher plugins share (the user's data file, civil dates, their common options) and the Absher
        // product (wording, links, web page); no plugin imports another.
        .target(
            name: "AbsherData", dependencies: ["SanadCore", "SanadChat"], path: "Plugins/AbsherData",
            exclude: ["README.md"], resources: [.copy("Resources")]),
        .target(
            name: "ProactiveAlertsPlugin", dependencies: ["SanadCore", "SanadChat", "AbsherData"],
            path: "Plugins/ProactiveAlerts"),
        .target(
            name: "DependentsPlugin", dependencies: ["SanadCore", "SanadChat", "AbsherData"],
            path: "Plugins/Dependents"),
        .target(
            name: "ServicesPlugin", dependencies: ["SanadCore", "SanadChat", "AbsherData"], path: "Plugins/Services",
            exclude: ["README.md", "Evaluation", "CLI"]),
        // `sanad services eval`: the routing evaluation with the keyword, embedding and model methods.
        .target(
            name: "ServicesCLI",
            dependencies: [
                "ServicesPlugin", "AbsherData", "SanadCommandLine", "SanadHost", "SanadCore", "SanadChat",
                "SanadStructured",
            ],
            path: "Plugins/Services/CLI"),
        // OCR-text ingest: MRZ, AAMVA barcode text, plain OCR text, field mapping. Its tests reach internal parsing
        // pieces (`@testable`), so the target is built for testing in release too; it is string parsing, not a hot
        // path.
        .target(
            name: "OCRIngestPlugin", dependencies: ["SanadNative", "SanadCore", "SanadChat"], path: "Plugins/OCRIngest",
            exclude: ["README.md", "CLI"], resources: [.copy("Resources")],
            swiftSettings: [.unsafeFlags(["-enable-testing"])]),
        // `sanad ingest`: the plugin's command, with the plugin.
        .target(
            name: "OCRIngestCLI",
            dependencies: [
                "OCRIngestPlugin", "SanadCommandLine", "SanadHost", "SanadCore", "SanadIndex", "SanadNative",
            ],
            path: "Plugins/OCRIngest/CLI"),
        // Conversational forms: templates as data, a generic engine, SQLite (dlopen) or JSON-file persistence,
        // backup/restore and exports.
        .target(
            name: "FormsPlugin",
            dependencies: ["SanadCore", "SanadChat", "SanadNative", "SanadArchive", "SanadStructured"],
            path: "Plugins/Forms",
            exclude: ["README.md", "CLI"], resources: [.copy("Resources")]),
        // `sanad form`: the plugin's verbs, with the plugin.
        .target(
            name: "FormsCLI",
            dependencies: [
                "FormsPlugin", "OCRIngestPlugin", "OCRIngestCLI", "SanadCommandLine", "SanadHost", "SanadCore",
                "SanadChat", "SanadIndex",
            ],
            path: "Plugins/Forms/CLI"),
        // Credit scoring: message input, a deterministic feature pass, a record signed with Ed25519 (libcrypto,
        // dlopen) and its verification, the outbox.
        .target(
            name: "CreditScoringPlugin",
            dependencies: ["SanadCore", "SanadChat", "SanadStructured", "SanadNative", "SanadSigning"],
            path: "Plugins/CreditScoring",
            exclude: ["README.md", "CLI"], resources: [.copy("Resources")]),
        // The receiving side of credit records: PostgreSQL through libpq (dlopen); the schema with its two roles,
        // the receiver service that verifies each staged record before storing it, and the device's submission
        // client (which can only stage documents and read their outcome).
        .target(
            name: "CreditReceiver", dependencies: ["CreditScoringPlugin", "SanadNative", "SanadCore"],
            path: "Plugins/CreditReceiver", exclude: ["README.md", "CLI"]),
        // `sanad credit receiver setup|serve|enroll|prune`: the receiving party's commands.
        .target(
            name: "CreditReceiverCLI",
            dependencies: ["CreditReceiver", "CreditScoringPlugin", "SanadCommandLine", "SanadCore"],
            path: "Plugins/CreditReceiver/CLI"),
        // `sanad credit`: the plugin's verbs, with the plugin (registered in the CLI's main.swift).
        .target(
            name: "CreditScoringCLI",
            dependencies: [
                "CreditScoringPlugin", "CreditReceiver", "CreditReceiverCLI", "SanadCommandLine", "SanadHost",
                "SanadCore", "SanadChat",
            ],
            path: "Plugins/CreditScoring/CLI"),

        // MARK: Programs.

        // The CLI: Wiring.swift is the only place that knows every engine, plugin and the product.
        .executableTarget(
            name: "sanad",
            dependencies: [
                "SanadCore", "SanadHost", "SanadChat", "SanadCommandLine", "GGUF", "PureSwiftBackend", "BLASBackend",
                "LlamaCppBackend", "RemoteBackend", "AbsherData", "ProactiveAlertsPlugin", "DependentsPlugin",
                "ServicesPlugin", "OCRIngestPlugin", "SanadNative", "SanadIndex", "SanadStructured", "FormsPlugin",
                "SanadServer", "CreditScoringPlugin", "CreditScoringCLI", "FormsCLI", "OCRIngestCLI", "ServicesCLI",
                "SanadSigning",
                "SanadReceipts",
            ],
            path: "Sources/sanad", exclude: ["README.md"]
        ),
        // The probe program: runs a native library's small real computation in its own process (NativeProbe).
        .executableTarget(
            name: "sanad-probe", dependencies: ["SanadNative", "LlamaCppBackend", "BLASBackend"],
            path: "Sources/sanad-probe", exclude: ["README.md"]),

        // MARK: Tests.

        // Test support: finds models and fixtures, runs the CLI, the server and the live llama.cpp tools.
        .target(name: "SanadTestSupport", dependencies: ["GGUF", "SanadCore"], path: "Tests/SanadTestSupport"),
        // The synthetic models of the fidelity tests at a benchmark's size, written to a folder (bench/synthetic-models).
        .executableTarget(
            name: "synthetic-models", dependencies: ["SanadTestSupport"], path: "Tests/synthetic-models"),
        .testTarget(name: "SanadNativeTests", dependencies: ["SanadNative"], path: "Tests/SanadNativeTests"),
        .testTarget(
            name: "GGUFTests", dependencies: ["GGUF", "SanadFiles", "SanadCore", "SanadTestSupport"],
            path: "Tests/GGUFTests"),
        .testTarget(name: "SafeTensorsTests", dependencies: ["SafeTensors"], path: "Tests/SafeTensorsTests"),
        .testTarget(name: "SanadArchiveTests", dependencies: ["SanadArchive"], path: "Tests/SanadArchiveTests"),
        .testTarget(
            name: "SanadCoreTests", dependencies: ["SanadCore", "GGUF", "SanadTestSupport"],
            path: "Tests/SanadCoreTests", exclude: ["Jinja"]),
        .testTarget(name: "SanadIndexTests", dependencies: ["SanadIndex"], path: "Tests/SanadIndexTests"),
        .testTarget(
            name: "SanadStructuredTests",
            dependencies: [
                "SanadStructured", "SanadChat", "PureSwiftBackend", "LlamaCppBackend", "SanadCore", "SanadTestSupport",
            ],
            path: "Tests/SanadStructuredTests"),
        .testTarget(
            name: "PureSwiftTests",
            dependencies: [
                "PureSwiftBackend", "PureSwiftKernels", "SanadCore", "SanadTokenizers", "GGUF", "SanadTestSupport",
            ],
            path: "Tests/PureSwiftTests"
        ),
        .testTarget(
            name: "BLASTests",
            dependencies: ["BLASBackend", "PureSwiftBackend", "SanadCore", "GGUF", "SanadNative", "SanadTestSupport"],
            path: "Tests/BLASTests"
        ),
        .testTarget(
            name: "LlamaCppTests",
            dependencies: ["LlamaCppBackend", "PureSwiftBackend", "SanadCore", "SanadNative", "SanadTestSupport"],
            path: "Tests/LlamaCppTests"
        ),
        .testTarget(
            name: "SanadHostTests", dependencies: ["SanadCore", "SanadHost", "SanadTestSupport"],
            path: "Tests/SanadHostTests"),
        .testTarget(
            name: "SanadServerTests",
            dependencies: ["SanadServer", "SanadCore", "SanadReceipts", "SanadSigning", "SanadTestSupport"],
            path: "Tests/SanadServerTests"),
        .testTarget(
            name: "PluginTests",
            dependencies: [
                "ProactiveAlertsPlugin", "DependentsPlugin", "ServicesPlugin", "FormsPlugin", "AbsherData", "SanadChat",
                "SanadCore", "SanadTestSupport",
            ],
            path: "Tests/PluginTests"
        ),
        .testTarget(
            name: "OCRIngestTests", dependencies: ["OCRIngestPlugin", "SanadCore", "SanadChat", "SanadTestSupport"],
            path: "Tests/OCRIngestTests"),
        .testTarget(
            name: "FormsTests",
            dependencies: [
                "FormsPlugin", "SanadCore", "SanadChat", "SanadTestSupport", "SanadArchive", "PureSwiftBackend",
            ],
            path: "Tests/FormsTests"),
        .testTarget(
            name: "CreditScoringTests",
            dependencies: ["CreditScoringPlugin", "CreditReceiver", "SanadCore", "SanadChat", "SanadTestSupport"],
            path: "Tests/CreditScoringTests"),
        .testTarget(
            name: "SanadReceiptsTests",
            dependencies: [
                "SanadReceipts", "SanadSigning", "SanadCore", "SanadStructured", "GGUF", "SanadTestSupport",
            ],
            path: "Tests/SanadReceiptsTests"),
        .testTarget(
            name: "CLITests", dependencies: ["SanadCore", "SanadCommandLine", "SanadTestSupport", "GGUF"],
            path: "Tests/CLITests"),
    ],
    swiftLanguageModes: [.v6]
)
