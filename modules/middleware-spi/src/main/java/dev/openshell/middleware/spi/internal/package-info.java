/**
 * The supervisor's own helpers that live beside the SPI but are not part of the plugin contract: the small grammars
 * ({@link dev.openshell.middleware.spi.internal.Syntax}, {@link dev.openshell.middleware.spi.internal.RpcTimeout}),
 * the failure policy of a middleware config ({@link dev.openshell.middleware.spi.internal.OnError}) and the outcome of
 * one stage run ({@link dev.openshell.middleware.spi.internal.StageResult}). No contract signature exposes them.
 * Exported by qualified export to the supervisor modules that use them only; plugins cannot read them, and they
 * change without notice ({@code @API(status = INTERNAL)}).
 */
package dev.openshell.middleware.spi.internal;
