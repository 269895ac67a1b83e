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
#else
    let avx2Flags: [String] = []
    let avx512Flags: [String] = []
#endif
let kernelFlags = ["-Ounchecked"]

let package = Package(
    name: "Sanad",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sanad", targets: ["sanad"]),
        .library(name: "SanadCore", targets: ["SanadCore"]),
        .library(name: "GGUF", targets: ["GGUF"]),
    ],
    targets: [
        // Memory-mapped, validated GGUF reader shared by engines, `sanad models` and memory estimates.
        .target(name: "GGUF", path: "Sources/GGUF"),
        // Optional native libraries found and opened at run time (dlopen), with a reason and a fix when missing.
        .target(name: "SanadNative", path: "Sources/SanadNative"),
        // Protocols, registries, host configuration, memory tiers and estimates, chat templates, errors.
        .target(name: "SanadCore", dependencies: ["GGUF"], path: "Sources/SanadCore"),
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
        // The always-available engine: pure Swift, reads GGUF.
        .target(
            name: "PureSwiftBackend",
            dependencies: ["SanadCore", "GGUF", "PureSwiftKernels", "PureSwiftKernelsAVX2", "PureSwiftKernelsAVX512"],
            path: "Backends/PureSwift",
            exclude: ["Architectures/README.md", "Tokenizers/README.md", "Kernels", "ISA"],
            swiftSettings: [.unsafeFlags(kernelFlags)]
        ),
        // The pure-Swift engine with CBLAS sgemm (OpenBLAS, BLIS) through dlopen for prompt batches.
        .target(
            name: "BLASBackend", dependencies: ["SanadCore", "GGUF", "PureSwiftBackend"], path: "Backends/BLAS",
            exclude: ["README.md"]),
        // llama.cpp's libllama through dlopen, with an ABI guard.
        .target(name: "LlamaCppBackend", dependencies: ["SanadCore", "GGUF"], path: "Backends/LlamaCpp"),
        // Feature plugins: one target per folder under Plugins/ (see Plugins/README.md).
        .target(
            name: "ProactiveAlertsPlugin", dependencies: ["SanadCore"], path: "Plugins/ProactiveAlerts",
            resources: [.copy("Resources")]),
        .target(
            name: "DependentsPlugin", dependencies: ["SanadCore", "ProactiveAlertsPlugin"], path: "Plugins/Dependents"),
        // The CLI: the only place that wires engines and plugins into the registries.
        .executableTarget(
            name: "sanad",
            dependencies: [
                "SanadCore", "GGUF", "PureSwiftBackend", "BLASBackend", "LlamaCppBackend", "ProactiveAlertsPlugin",
                "DependentsPlugin",
            ],
            path: "Sources/sanad"
        ),
        // Test support: writes tiny synthetic GGUF files, finds models and fixtures.
        .target(name: "SanadTestSupport", dependencies: ["GGUF", "SanadCore"], path: "Tests/SanadTestSupport"),
        .testTarget(name: "SanadNativeTests", dependencies: ["SanadNative"], path: "Tests/SanadNativeTests"),
        .testTarget(name: "GGUFTests", dependencies: ["GGUF", "SanadTestSupport"], path: "Tests/GGUFTests"),
        .testTarget(
            name: "SanadCoreTests", dependencies: ["SanadCore", "SanadTestSupport"], path: "Tests/SanadCoreTests"),
        .testTarget(
            name: "PureSwiftTests",
            dependencies: ["PureSwiftBackend", "PureSwiftKernels", "SanadCore", "GGUF", "SanadTestSupport"],
            path: "Tests/PureSwiftTests"
        ),
        .testTarget(
            name: "LlamaCppTests",
            dependencies: ["LlamaCppBackend", "PureSwiftBackend", "SanadCore", "SanadTestSupport"],
            path: "Tests/LlamaCppTests"
        ),
        .testTarget(
            name: "BLASTests",
            dependencies: ["BLASBackend", "PureSwiftBackend", "SanadCore", "GGUF", "SanadTestSupport"],
            path: "Tests/BLASTests"
        ),
        .testTarget(
            name: "PluginTests",
            dependencies: ["ProactiveAlertsPlugin", "DependentsPlugin", "SanadCore", "SanadTestSupport"],
            path: "Tests/PluginTests"
        ),
        .testTarget(name: "CLITests", dependencies: ["SanadTestSupport"], path: "Tests/CLITests"),
        // OCR-text ingest (issue 22): MRZ, AAMVA barcode text, plain OCR text, field mapping. Foundation only.
        .target(name: "OCRIngestPlugin", path: "Plugins/OCRIngest", exclude: ["README.md"]),
        .testTarget(name: "OCRIngestTests", dependencies: ["OCRIngestPlugin"], path: "Tests/OCRIngestTests"),
    ],
    swiftLanguageModes: [.v5]
)

// Issue 19: sentence embeddings. A validated, memory-mapped safetensors reader (Foundation only).
package.targets += [
    .target(name: "SafeTensors", path: "Sources/SafeTensors"),
    .testTarget(name: "SafeTensorsTests", dependencies: ["SafeTensors"], path: "Tests/SafeTensorsTests"),
]
