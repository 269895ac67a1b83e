import AbsherData
import SanadChat
import SanadCore

extension ProactiveAlertsPlugin {
    /// `list_alerts`: the user's active proactive alerts, soonest first.
    var listAlertsTool: PluginTool {
        PluginTool(
            name: "list_alerts",
            description:
                "Lists the user's documents that expire within the alert window, soonest first, with days remaining and links."
        ) { [self] _ in
            .object([
                "today": .string(window.today.description), "windowDays": .number(Double(window.days)),
                "alerts": .array(alerts.map(\.json)),
            ])
        }
    }

    /// `open_service_page`: the review and payment page of one of the user's alerts.
    var openServicePageTool: PluginTool {
        PluginTool(
            name: "open_service_page",
            description: "Opens the review and payment page of a renewal service for one of the user's alerts.",
            arguments: [
                ToolArgument(
                    "serviceType",
                    schema: .object([
                        "type": .string("string"),
                        "enum": .array(AlertServiceType.allCases.map { .string($0.rawValue) }),
                    ]), required: true),
                ToolArgument("alertId", required: true),
            ]
        ) { [self] args in
            let typeName = try args.string("serviceType")
            guard let service = AlertServiceType(rawValue: typeName) else {
                throw ToolError(
                    tool: "open_service_page",
                    "serviceType '\(typeName)' is not one of: "
                        + AlertServiceType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let alertId = try args.string("alertId")
            let title = userData.documents.first { $0.id == alertId }?.type.renewalService.title ?? service.title
            return try servicePage(
                service: service, link: DeepLink(serviceType: service.rawValue, title: title, alertId: alertId)
            ).json(AbsherSettings.linkFormat)
        }
    }
}
