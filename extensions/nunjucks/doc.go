// Package nunjucks renders MetalSoft's extension templates (requestTemplate,
// commandTemplate) exactly as Nunjucks 3.2.4 renders them with autoescape
// off. gonja v2 lexes and parses the template; this package is the
// compatibility layer that gives the result Nunjucks' JavaScript semantics.
package nunjucks
