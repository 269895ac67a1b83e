// swift-tools-version:6.0
// Sanad: an on-device LLM inference host. No package dependencies: native engines (libllama, OpenBLAS) are
// found and loaded at run time with dlopen.
import PackageDescription

let package = Package(
    name: "Sanad",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "sanad", targets: ["sanad"]),
        .library(name: "SanadCore", targets: ["SanadCore"]),
        .library(name: "GGUF", targets: ["GGUF"]),
    ],
    targets: [
        // Memory-mapped, validated GGUF reader shared by engines, `sanad models` and memory estimates.
        .target(name: "GGUF", path: "Sources/GGUF"),
        // Protocols, registries, host configuration, memory tiers and estimates, chat templates, errors.
        .target(name: "SanadCore", dependencies: ["GGUF"], path: "Sources/SanadCore"),
        // The always-available engine: pure Swift, reads GGUF.
        .target(
            name: "PureSwiftBackend",
            dependencies: ["SanadCore", "GGUF"],
            path: "Backends/PureSwift",
            exclude: ["Architectures/README.md", "Tokenizers/README.md"],
            swiftSettings: [.unsafeFlags(["-Ounchecked"])]
        ),
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
                "SanadCore", "GGUF", "PureSwiftBackend", "LlamaCppBackend", "ProactiveAlertsPlugin", "DependentsPlugin",
            ],
            path: "Sources/sanad"
        ),
        // Test support: writes tiny synthetic GGUF files, finds models and fixtures.
        .target(name: "SanadTestSupport", dependencies: ["GGUF", "SanadCore"], path: "Tests/SanadTestSupport"),
        .testTarget(name: "GGUFTests", dependencies: ["GGUF", "SanadTestSupport"], path: "Tests/GGUFTests"),
        .testTarget(
            name: "SanadCoreTests", dependencies: ["SanadCore", "SanadTestSupport"], path: "Tests/SanadCoreTests"),
        .testTarget(
            name: "PureSwiftTests",
            dependencies: ["PureSwiftBackend", "SanadCore", "GGUF", "SanadTestSupport"],
            path: "Tests/PureSwiftTests"
        ),
        .testTarget(
            name: "LlamaCppTests",
            dependencies: ["LlamaCppBackend", "PureSwiftBackend", "SanadCore", "SanadTestSupport"],
            path: "Tests/LlamaCppTests"
        ),
        .testTarget(
            name: "PluginTests",
            dependencies: ["ProactiveAlertsPlugin", "DependentsPlugin", "SanadCore", "SanadTestSupport"],
            path: "Tests/PluginTests"
        ),
        .testTarget(name: "CLITests", dependencies: ["SanadTestSupport"], path: "Tests/CLITests"),
    ],
    swiftLanguageModes: [.v5]
)
