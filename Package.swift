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
// the tokenizers and everything that reads untrusted input keep their bounds and precondition checks.
let kernelFlags = ["-Ounchecked"]

let package = Package(
    name: "Sanad",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sanad", targets: ["sanad"]),
        .executable(name: "sanad-probe", targets: ["sanad-probe"]),
        .library(name: "SanadCore", targets: ["SanadCore"]),
        .library(name: "SanadHost", targets: ["SanadHost"]),
        .library(name: "SanadChat", targets: ["SanadChat"]),
        .library(name: "GGUF", targets: ["GGUF"]),
    ],
    targets: [
        // File safety below every reader and loader: regular files only (a FIFO never blocks), read-only mappings,
        // ELF shared objects checked before dlopen sees them.
        .target(name: "SanadFiles", path: "Sources/SanadFiles", exclude: ["README.md"]),
        // Memory-mapped, validated GGUF reader shared by engines, `sanad models` and memory estimates.
        .target(name: "GGUF", dependencies: ["SanadFiles"], path: "Sources/GGUF"),
        // Optional native libraries found and opened at run time (dlopen), with a reason and a fix when missing.
        // Each library is proved to compute in a child process (NativeProbe, the sanad-probe program) before use.
        .target(name: "SanadNative", dependencies: ["SanadFiles", "SanadArchive"], path: "Sources/SanadNative"),
        // The probe program: runs a native library's small real computation in its own process (NativeProbe).
        .executableTarget(
            name: "sanad-probe", dependencies: ["SanadNative", "LlamaCppBackend", "BLASBackend"],
            path: "Sources/sanad-probe"),
        // The engine contract: backends, sessions, generation parameters, chat messages and templates, JSON values,
        // errors, the backend registry.
        .target(name: "SanadCore", dependencies: ["GGUF"], path: "Sources/SanadCore", exclude: ["README.md"]),
        // The host: tier configs, memory tiers and estimates, model summaries, opening a session.
        .target(
            name: "SanadHost", dependencies: ["SanadCore", "SanadChat", "GGUF"], path: "Sources/SanadHost",
            exclude: ["README.md"]),
        // Command plumbing in swift-argument-parser's style (arguments, usage errors, exit codes, commands) and the
        // host as commands open it: the CLI's generic commands and the plugins' own commands (Plugins/*/CLI).
        .target(
            name: "SanadCommandLine", dependencies: ["SanadCore", "SanadChat", "SanadHost"],
            path: "Sources/SanadCommandLine", exclude: ["README.md"]),
        // The chat and plugin layer: chat session, entries, deep links, navigation, grounding, plugins, tools.
        .target(name: "SanadChat", dependencies: ["SanadCore"], path: "Sources/SanadChat", exclude: ["README.md"]),
        // The pure-Swift engine's kernels (portable build) and their per-CPU builds.
        .target(
            name: "PureSwiftKernels", dependencies: ["GGUF"], path: "Backends/PureSwift/Kernels",
            swiftSettings: [.unsafeFlags(kernelFlags)]),
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
        // The tokenizers llama.cpp's vocabularies need (BPE, SentencePiece, WordPiece), read from GGUF or a
        // tokenizer folder: shared by the pure-Swift engine and the remote engine. Checked code (untrusted arrays).
        .target(
            name: "SanadTokenizers", dependencies: ["GGUF"], path: "Sources/SanadTokenizers", exclude: ["README.md"]),
        // The always-available engine: pure Swift, reads GGUF.
        .target(
            name: "PureSwiftBackend",
            dependencies: [
                "SanadCore", "GGUF", "SanadFiles", "SafeTensors", "SanadTokenizers", "PureSwiftKernels",
                "PureSwiftKernelsAVX2",
                "PureSwiftKernelsAVX512", "PureSwiftKernelsAVX512VNNI",
            ],
            path: "Backends/PureSwift",
            exclude: ["Architectures/README.md", "Kernels", "ISA"]
        ),
        // The pure-Swift engine with CBLAS sgemm (OpenBLAS, BLIS) through dlopen for prompt batches.
        .target(
            name: "BLASBackend", dependencies: ["SanadCore", "GGUF", "SanadNative", "PureSwiftBackend"],
            path: "Backends/BLAS",
            exclude: ["README.md"]),
        // llama.cpp's libllama through dlopen, with an ABI guard.
        .target(
            name: "LlamaCppBackend", dependencies: ["SanadCore", "GGUF", "SanadFiles", "SanadNative"],
            path: "Backends/LlamaCpp"),
        // Feature plugins: one target per folder under Plugins/ (see Plugins/README.md). AbsherData is what the
        // Absher plugins share (the user's data file, civil dates, their common options); no plugin imports another.
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
            exclude: ["README.md"]),
        // The CLI: the only place that wires engines and plugins into the registries.
        .executableTarget(
            name: "sanad",
            dependencies: [
                "SanadCore", "SanadHost", "SanadChat", "SanadCommandLine", "GGUF", "PureSwiftBackend", "BLASBackend",
                "LlamaCppBackend",
                "AbsherData", "ProactiveAlertsPlugin", "DependentsPlugin", "ServicesPlugin", "OCRIngestPlugin",
                "SanadNative",
                "SanadIndex", "SanadStructured", "FormsPlugin", "SanadServer", "RemoteBackend", "CreditScoringPlugin",
                "CreditScoringCLI",
            ],
            path: "Sources/sanad"
        ),
        // Test support: writes tiny synthetic GGUF files, finds models and fixtures.
        .target(name: "SanadTestSupport", dependencies: ["GGUF", "SanadCore"], path: "Tests/SanadTestSupport"),
        .testTarget(name: "SanadNativeTests", dependencies: ["SanadNative"], path: "Tests/SanadNativeTests"),
        .testTarget(
            name: "GGUFTests", dependencies: ["GGUF", "SanadFiles", "SanadCore", "SanadTestSupport"],
            path: "Tests/GGUFTests"),
        .testTarget(name: "SanadCoreTests", dependencies: ["SanadCore"], path: "Tests/SanadCoreTests"),
        .testTarget(
            name: "SanadHostTests", dependencies: ["SanadCore", "SanadHost", "SanadTestSupport"],
            path: "Tests/SanadHostTests"),
        .testTarget(
            name: "PureSwiftTests",
            dependencies: [
                "PureSwiftBackend", "PureSwiftKernels", "SanadCore", "SanadTokenizers", "GGUF", "SanadTestSupport",
            ],
            path: "Tests/PureSwiftTests"
        ),
        .testTarget(
            name: "LlamaCppTests",
            dependencies: ["LlamaCppBackend", "PureSwiftBackend", "SanadCore", "SanadNative", "SanadTestSupport"],
            path: "Tests/LlamaCppTests"
        ),
        .testTarget(
            name: "BLASTests",
            dependencies: ["BLASBackend", "PureSwiftBackend", "SanadCore", "GGUF", "SanadNative", "SanadTestSupport"],
            path: "Tests/BLASTests"
        ),
        .testTarget(
            name: "PluginTests",
            dependencies: [
                "ProactiveAlertsPlugin", "DependentsPlugin", "ServicesPlugin", "FormsPlugin", "AbsherData", "SanadChat",
                "SanadCore", "SanadTestSupport",
            ],
            path: "Tests/PluginTests"
        ),
        .testTarget(name: "CLITests", dependencies: ["SanadCore", "SanadTestSupport"], path: "Tests/CLITests"),
        // OCR-text ingest (issue 22): MRZ, AAMVA barcode text, plain OCR text, field mapping. Foundation only.
        // Its tests reach internal parsing pieces (`@testable`), so the target is built for testing in release too;
        // it is string parsing, not a hot path.
        .target(
            name: "OCRIngestPlugin", dependencies: ["SanadNative", "SanadCore", "SanadChat"], path: "Plugins/OCRIngest",
            exclude: ["README.md"],
            swiftSettings: [.unsafeFlags(["-enable-testing"])]),
        .testTarget(
            name: "OCRIngestTests", dependencies: ["OCRIngestPlugin", "SanadCore", "SanadChat", "SanadTestSupport"],
            path: "Tests/OCRIngestTests"),
        // Sentence embeddings (issue 19): a validated, memory-mapped safetensors reader (Foundation only).
        .target(name: "SafeTensors", dependencies: ["SanadFiles"], path: "Sources/SafeTensors"),
        .testTarget(name: "SafeTensorsTests", dependencies: ["SafeTensors"], path: "Tests/SafeTensorsTests"),
        // Sentence embeddings (issue 19): the vector index plugins and `sanad index` use (Foundation only).
        // Checksums (CRC-32, SHA-256) and the ZIP container, for files Sanad writes for people to keep.
        .target(name: "SanadArchive", path: "Sources/SanadArchive"),
        .testTarget(name: "SanadArchiveTests", dependencies: ["SanadArchive"], path: "Tests/SanadArchiveTests"),
        .target(name: "SanadIndex", dependencies: ["SanadArchive"], path: "Sources/SanadIndex"),
        .testTarget(name: "SanadIndexTests", dependencies: ["SanadIndex"], path: "Tests/SanadIndexTests"),
        // Structured output (issue 20): JSON Schema → byte matcher → a constraint stage of the sampling chain.
        .target(name: "SanadStructured", dependencies: ["SanadCore"], path: "Sources/SanadStructured"),
        .testTarget(
            name: "SanadStructuredTests",
            dependencies: [
                "SanadStructured", "SanadChat", "PureSwiftBackend", "LlamaCppBackend", "SanadCore", "SanadTestSupport",
            ],
            path: "Tests/SanadStructuredTests"),
        // Conversational forms (issue 21): templates as data, a generic engine, SQLite (dlopen) or JSON-file
        // persistence, backup/restore and exports; `sanad form` and the `forms` plugin.
        .target(
            name: "FormsPlugin",
            dependencies: ["SanadCore", "SanadChat", "SanadNative", "SanadArchive", "SanadStructured"],
            path: "Plugins/Forms",
            exclude: ["README.md"], resources: [.copy("Resources")]),
        .testTarget(
            name: "FormsTests",
            dependencies: [
                "FormsPlugin", "SanadCore", "SanadChat", "SanadTestSupport", "SanadArchive", "PureSwiftBackend",
            ],
            path: "Tests/FormsTests"),
        // `sanad serve` (issue 24): an HTTP/1.1 server on POSIX sockets and the OpenAI-compatible API over it.
        .target(
            name: "SanadServer", dependencies: ["SanadCore", "SanadStructured", "SanadChat"],
            path: "Sources/SanadServer",
            exclude: ["README.md"]),
        .testTarget(
            name: "SanadServerTests", dependencies: ["SanadServer", "SanadCore", "SanadTestSupport"],
            path: "Tests/SanadServerTests"),
        // The `openai` engine (issue 24): an OpenAI-compatible server runs the model; tokenizer and template local.
        .target(
            name: "RemoteBackend", dependencies: ["SanadCore", "GGUF", "SanadTokenizers"], path: "Backends/Remote"),
        // Credit scoring (issue 23): message input, a deterministic feature pass, a record signed with Ed25519
        // (libcrypto, dlopen) and its verification.
        .target(
            name: "CreditScoringPlugin", dependencies: ["SanadCore", "SanadChat", "SanadStructured", "SanadNative"],
            path: "Plugins/CreditScoring",
            exclude: ["README.md", "CLI"]),
        // The receiving side of credit records: PostgreSQL through libpq (dlopen), beside the database, not on the
        // device; verifies each record before storing it.
        .target(
            name: "CreditReceiver", dependencies: ["CreditScoringPlugin", "SanadNative"],
            path: "Plugins/CreditReceiver",
            exclude: ["README.md"]),
        // `sanad credit`: the plugin's verbs, with the plugin (registered in the CLI's main.swift).
        .target(
            name: "CreditScoringCLI",
            dependencies: [
                "CreditScoringPlugin", "CreditReceiver", "SanadCommandLine", "SanadHost", "SanadCore", "SanadChat",
            ],
            path: "Plugins/CreditScoring/CLI"),
        .testTarget(
            name: "CreditScoringTests",
            dependencies: ["CreditScoringPlugin", "CreditReceiver", "SanadCore", "SanadChat", "SanadTestSupport"],
            path: "Tests/CreditScoringTests"),
    ],
    swiftLanguageModes: [.v6]
)
