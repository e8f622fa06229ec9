/**
 * The plugin host and provider registry: discovery of built-in and third-party middleware providers, and the checks
 * RFC 0009 ("Registration and delivery") puts on binding IDs.
 */
package dev.openshell.supervisor.engine;
