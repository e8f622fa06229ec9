/**
 * OCSF audit events and sinks. {@link dev.openshell.supervisor.audit.OcsfEvents} builds the three event classes the
 * supervisor emits; {@link dev.openshell.supervisor.audit.AuditSink} receives them;
 * {@link dev.openshell.supervisor.audit.JsonlAuditSink} writes one JSON object per line to standard output or to a
 * file rotated daily and by size.
 */
package dev.openshell.supervisor.audit;
