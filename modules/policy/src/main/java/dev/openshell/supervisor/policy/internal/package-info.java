/** Helpers shared by the loaders: problem collection, key paths, safe rendering of values, file reading. Not exported. */
package dev.openshell.supervisor.policy.internal;
