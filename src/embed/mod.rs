//! Program and sequence embeddings (CTOS §2.3, §2.5): Doc2Vec PV-DM training, region
//! graphs of functions, and the program vector built from them over the call graph.

pub mod doc2vec;
