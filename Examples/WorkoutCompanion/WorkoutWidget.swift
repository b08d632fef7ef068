// The SwiftUI part of the complication, as the watchOS target holds it. SwiftUI has no Linux
// build, so Package.swift excludes this file from the Linux target (README, "Test your own
// widget"); it is here so the example is the whole widget.
import SwiftUI
import WidgetKit

@main
struct WorkoutWidget: Widget {
    let kind: String = WorkoutWidgetKind.kind

    var body: some WidgetConfiguration {
        StaticConfiguration(kind: kind, provider: WorkoutProvider(store: WorkoutStore())) { entry in
            Gauge(value: entry.progress) { Text("\(entry.minutes)") }
                .gaugeStyle(.accessoryCircularCapacity)
                .containerBackground(.fill.tertiary, for: .widget)
        }
        .configurationDisplayName("Workout")
        .description("Today's active minutes.")
        .supportedFamilies([.accessoryCircular, .accessoryRectangular, .accessoryInline, .accessoryCorner])
    }
}
