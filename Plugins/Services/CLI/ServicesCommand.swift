import AbsherData
import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost
import ServicesPlugin

/// `sanad services`: the services knowledge base's routing evaluation.
public enum ServicesCommand: SanadCommand {
    public static let name = "services"
    public static let summary = "Evaluate how typed questions are routed to a service, facet and subject"
    public static let help = """
        Usage: sanad services eval [--method keywords|embeddings|model|all] [--questions FILE] [-m MODEL]
                                   [--embedding-model MODEL] [--now DATE] [--user FILE] [--misses]

        Runs every question of the routing evaluation set (default: Plugins/Services/Evaluation/questions.json of
        the source tree this program was built from) through a chat with the config's plugins (the services plugin
        routed by METHOD; templates, so the engine never phrases) and scores what the person reads: the service
        (the reply's link) and whose it is (the names the reply states), every facet asked answered, the reply in
        the asker's language, and no number that is not in the person's data. Prints a Markdown table per method
        and language.
          keywords     the keyword router (what the chat uses)
          embeddings   the nearest service by the tier's sentence embeddings (all-MiniLM-L6-v2) of the question
                       and of each service's names, keywords and description; facets and subject by keywords
          model        the tier's chat model (or -m MODEL) picks the service and facets, constrained by a JSON
                       schema over their ids; the subject by keywords

        Options:
          --method M            keywords (default), embeddings, model, or all three
          --questions FILE      the evaluation set
          -m, --model MODEL     the chat model of the model method (default: the tier's)
          --embedding-model MODEL
                                the embedding model of the embeddings method (default: the tier's)
          --misses              also list every question routed wrong or with a facet left unanswered
        \(PluginHost.clockHelp)
        \(PluginHost.userHelp)
        \(HostContext.optionsHelp)
        """

    public static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let methodName = try arguments.option("--method") ?? "keywords"
        let methods = methodName == "all" ? ["keywords", "embeddings", "model"] : [methodName]
        guard methods.allSatisfy(["keywords", "embeddings", "model"].contains) else {
            throw UsageError("--method takes keywords, embeddings, model or all, not '\(methodName)'")
        }
        let questionsPath = try arguments.option("--questions")
        let modelName = try arguments.option("-m", "--model")
        let embeddingName = try arguments.option("--embedding-model")
        let showMisses = arguments.flag("--misses")
        let clock = try PluginHost.clock(&arguments)
        let host = try HostContext.load(&arguments)
        let user = try PluginHost.userFile(&arguments, host: host)
        guard try arguments.positionals(min: 1, max: 1, names: "eval") == ["eval"] else {
            throw UsageError("sanad services takes the verb eval")
        }
        try arguments.finish()

        let questions = try RoutingEvaluation.load(
            questionsPath.map { URL(fileURLWithPath: $0) } ?? RoutingEvaluation.defaultQuestionsURL)
        let plugins = try PluginHost.makePlugins(host, now: clock, userData: user)
        guard let index = plugins.firstIndex(where: { $0 is ServicesPlugin }),
            let services = plugins[index] as? ServicesPlugin
        else {
            throw UsageError("the config hosts no services plugin (\(ServicesPlugin.pluginID)) to evaluate")
        }
        // The chat needs a loaded engine; with template phrasing it never generates.
        let plan = try host.planModel(ModelRequest(model: modelName, contextLength: 2048))
        let engine = try await host.opener.open(plan)
        var failed = false
        for method in methods {
            var hosted = plugins
            let started = Date()
            switch method {
            case "embeddings":
                let model = try await host.openEmbeddingModel(model: embeddingName, backend: nil, threads: nil)
                let router = try await EmbeddingRouter(services.router, model: model)
                hosted[index] = services.routed(by: { try await router.route($0) })
            case "model":
                // Its own session: structured generation resets it for every question.
                let router = ModelRouter(services.router, session: try await host.opener.open(plan))
                hosted[index] = services.routed(by: { try await router.route($0) })
                printError("[model method: \(plan.url.lastPathComponent) on \(plan.backend.id)]")
            default: break
            }
            let outcomes = try await RoutingEvaluation.run(
                questions, plugins: hosted, data: services.userData, catalog: services.catalog, now: clock(),
                loadEngine: { engine })
            print(RoutingEvaluation.table(outcomes, method: method))
            print("(\(method): \(String(format: "%.1f", Date().timeIntervalSince(started))) s)\n")
            if showMisses { for line in RoutingEvaluation.misses(outcomes) { print("  miss: \(line)") } }
            failed = failed || outcomes.contains { !$0.foreignNumbers.isEmpty }
        }
        return failed ? ExitCode.failure : ExitCode.success
    }
}
